// The language-modeling recipes' text splits, perplexity and refusal to predict.
#include "kiln/tasks/lm_text.h"

#include <cmath>
#include <limits>
#include <string>

#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"

namespace kiln {

LmText read_lm_text(const TrainingArguments& args, SplitsWanted wanted, std::string_view task,
                    std::ostream& log) {
  const std::string name(task);
  check_usage(!wanted.test, "--do_predict", name, " has no prediction step; evaluate instead");
  LmText text;
  // As classification: a split is held out only for a run that evaluates.
  const bool split = wanted.eval && !args.validation_file && args.validation_split_percentage > 0;
  if (wanted.train || split) {
    const std::string why = name + " needs --train_file";
    text.train = read_text_lines(required_file(args.train_file, "--train_file", why.c_str()));
    if (split) {
      auto [held_out, kept] = split_text_lines(*text.train, args.validation_split_percentage);
      report_held_out(log, held_out.lines.size(), text.train->lines.size(), "lines",
                      text.train->source, args);
      text.train = std::move(kept);
      text.eval = std::move(held_out);
    }
  }
  if (wanted.eval && !text.eval) {
    text.eval = read_text_lines(required_file(args.validation_file, "--validation_file",
                                              "evaluation needs --validation_file, or "
                                              "--train_file with --validation_split_percentage "
                                              "above 0"));
  }
  return text;
}

nlohmann::json LanguageModelingTask::evaluate(Trainer& trainer, const TaskData& data,
                                              const TrainingArguments& args) const {
  nlohmann::json metrics = Task::evaluate(trainer, data, args);
  const double loss = metrics["eval_loss"].get<double>();
  metrics["perplexity"] = loss < std::log(std::numeric_limits<double>::max())
                              ? std::exp(loss)
                              : std::numeric_limits<double>::infinity();
  return metrics;
}

nlohmann::json LanguageModelingTask::predict(Trainer& /*trainer*/, const TaskData& /*data*/,
                                             const TrainingArguments& /*args*/) const {
  fail("--do_predict", name(), " has no prediction step; evaluate instead");  // refused earlier
}

}  // namespace kiln
