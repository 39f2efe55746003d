// The reports of qa and mlm runs: the evaluation table (with run_mlm.py's perplexity) and
// run_qa.py's prediction files (eval_predictions.json after evaluation).
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include "commands.h"
#include "kiln/dist/communicator.h"
#include "kiln/io/atomic_file.h"
#include "kiln/ir/error.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/qa_data.h"
#include "kiln/train/results_files.h"
#include "setup.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

void write_json(const fs::path& path, const nlohmann::ordered_json& value) {
  write_file_atomically(path.string(), value.dump(4) + "\n");
}

// postprocess_qa_predictions' files (utils_qa.py): `prefix`predictions.json,
// `prefix`nbest_predictions.json and, for SQuAD v2.0, `prefix`null_odds.json.
void write_qa_prediction_files(const fs::path& folder, const std::string& prefix,
                               const QaPredictionSet& answers, bool version_2_with_negative) {
  nlohmann::ordered_json predictions = nlohmann::ordered_json::object();
  nlohmann::ordered_json nbest = nlohmann::ordered_json::object();
  for (size_t e = 0; e < answers.predictions.size(); ++e) {
    const auto& [id, text] = answers.predictions[e];
    predictions[id] = text;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const QaCandidate& candidate : answers.nbest[e]) {
      list.push_back({{"start_logit", candidate.start_logit},
                      {"end_logit", candidate.end_logit},
                      {"text", candidate.text},
                      {"probability", candidate.probability}});
    }
    nbest[id] = std::move(list);
  }
  fs::create_directories(folder);
  write_json(folder / (prefix + "predictions.json"), predictions);
  write_json(folder / (prefix + "nbest_predictions.json"), nbest);
  std::string written = prefix + "predictions.json and " + prefix + "nbest_predictions.json";
  if (version_2_with_negative) {
    nlohmann::ordered_json odds = nlohmann::ordered_json::object();
    for (const auto& [id, value] : answers.null_odds) odds[id] = value;
    write_json(folder / (prefix + "null_odds.json"), odds);
    written += " and " + prefix + "null_odds.json";
  }
  std::cerr << "wrote " << answers.predictions.size() << " answers to " << folder.string() << ": "
            << written << '\n';
}

}  // namespace

void report_task_evaluation(Trainer& trainer, const TaskData& data, const TrainingArguments& args) {
  ForwardOutputs outputs;
  nlohmann::json metrics = trainer.evaluate(data, "eval", &outputs);
  if (!dist::is_main_process()) return;  // the main process writes the results
  // run_qa.py's evaluation writes its answers with the "eval" prefix.
  if (const auto* questions = dynamic_cast<const QaEvalData*>(&data)) {
    write_qa_prediction_files(args.output_dir, "eval_", questions->predictions(outputs),
                              questions->options().version_2_with_negative);
  }
  metrics["eval_samples"] = data.size();
  if (task_kind(args.task) == TaskKind::masked_lm) {
    const double loss = metrics["eval_loss"].get<double>();
    metrics["perplexity"] = loss < std::log(std::numeric_limits<double>::max())
                                ? std::exp(loss)
                                : std::numeric_limits<double>::infinity();
  }
  std::cout << format_metrics_table("eval", metrics);
  fs::create_directories(args.output_dir);
  save_metrics(args.output_dir, "eval", metrics);
}

void report_task_predictions(Trainer& trainer, const TaskData& data, const TrainingArguments& args) {
  const auto* questions = dynamic_cast<const QaEvalData*>(&data);
  check(questions != nullptr, "--do_predict", "only --task qa (and classification) predicts");
  ForwardOutputs outputs = trainer.forward(data, false, "predicting batch");
  if (!dist::is_main_process()) return;  // the main process writes the results
  write_qa_prediction_files(args.output_dir, "", questions->predictions(outputs),
                            questions->options().version_2_with_negative);
  nlohmann::json metrics = speed_metrics("predict", outputs.seconds,
                                         static_cast<int64_t>(data.size()), outputs.batches);
  metrics["predict_samples"] = data.size();
  std::cout << format_metrics_table("predict", metrics);
  save_metrics(args.output_dir, "predict", metrics);
}

}  // namespace kiln::cli
