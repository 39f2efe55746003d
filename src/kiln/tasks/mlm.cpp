// --task mlm: run_mlm.py's text blocks (or lines) and validation split, masked afresh each
// epoch; evaluation adds perplexity. It has no prediction step.
#include "kiln/tasks/mlm.h"

#include <cmath>
#include <limits>

#include "kiln/io/lm_dataset.h"
#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "kiln/train/mlm_data.h"

namespace kiln {
namespace {

std::unique_ptr<TaskData> mlm_split(const TrainingArguments& args, const Tokenizer& tokenizer,
                                    const TextLines& text,
                                    const std::optional<int64_t>& max_samples) {
  LmDatasetOptions options;
  options.max_seq_length = static_cast<size_t>(args.max_seq_length);
  options.line_by_line = args.line_by_line;
  LmDataset dataset = lm_dataset(tokenizer, text, options);
  if (max_samples && dataset.size() > static_cast<size_t>(*max_samples)) {
    dataset.examples.resize(static_cast<size_t>(*max_samples));
    dataset.lines.resize(static_cast<size_t>(*max_samples));
  }
  check(dataset.size() > 0, text.source, "no examples of ", options.max_seq_length,
        " tokens (a shorter --max_seq_length or --line_by_line may help)");
  std::optional<int32_t> mask = tokenizer.token_to_id(tokenizer.config().special.mask);
  check(mask.has_value(), "--task mlm", "the tokenizer has no mask token '",
        tokenizer.config().special.mask, "'");
  MlmOptions mlm;
  mlm.mlm_probability = args.mlm_probability;
  mlm.mask_id = *mask;
  mlm.vocab_size = tokenizer.vocab_size();
  mlm.seed = args.seed;
  return std::make_unique<MlmData>(std::move(dataset), mlm);
}

class MlmTask : public Task {
 public:
  std::string_view name() const override { return "mlm"; }
  ModelHead head() const override { return ModelHead::masked_lm; }

  TaskSplits load_data(const RunOptions& options, const Tokenizer& tokenizer,
                       PretrainedConfig& /*config*/, SplitsWanted wanted,
                       std::ostream& log) const override {
    const TrainingArguments& args = options.args;
    check_usage(!wanted.test, "--do_predict", "mlm has no prediction step; evaluate instead");
    TaskSplits data;
    // As classification: a split is held out only for a run that evaluates.
    const bool split =
        wanted.eval && !args.validation_file && args.validation_split_percentage > 0;
    std::optional<TextLines> train, eval;
    if (wanted.train || split) {
      train = read_text_lines(
          required_file(args.train_file, "--train_file", "mlm needs --train_file"));
      if (split) {
        auto [held_out, kept] = split_text_lines(*train, args.validation_split_percentage);
        report_held_out(log, held_out.lines.size(), train->lines.size(), "lines",
                        train->source, args);
        train = std::move(kept);
        eval = std::move(held_out);
      }
    }
    if (wanted.eval && !eval) {
      eval = read_text_lines(required_file(args.validation_file, "--validation_file",
                                           "evaluation needs --validation_file, or --train_file "
                                           "with --validation_split_percentage above 0"));
    }
    if (wanted.train) data.train = mlm_split(args, tokenizer, *train, args.max_train_samples);
    if (wanted.eval) data.eval = mlm_split(args, tokenizer, *eval, args.max_eval_samples);
    return data;
  }

  // run_mlm.py's perplexity: exp(eval_loss), infinite when that overflows.
  nlohmann::json evaluate(Trainer& trainer, const TaskData& data,
                          const TrainingArguments& args) const override {
    nlohmann::json metrics = Task::evaluate(trainer, data, args);
    const double loss = metrics["eval_loss"].get<double>();
    metrics["perplexity"] = loss < std::log(std::numeric_limits<double>::max())
                                ? std::exp(loss)
                                : std::numeric_limits<double>::infinity();
    return metrics;
  }

  nlohmann::json predict(Trainer& /*trainer*/, const TaskData& /*data*/,
                         const TrainingArguments& /*args*/) const override {
    fail("--do_predict", "mlm has no prediction step; evaluate instead");  // load_data refused
  }
};

}  // namespace

const Task& mlm_task() {
  static const MlmTask task;
  return task;
}

}  // namespace kiln
