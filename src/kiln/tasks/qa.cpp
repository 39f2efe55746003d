// --task qa: SQuAD files into run_qa.py's features, and utils_qa.py's answers and files.
#include "kiln/tasks/qa.h"

#include <filesystem>
#include <iostream>

#include "kiln/dist/communicator.h"
#include "kiln/io/atomic_file.h"
#include "kiln/io/squad_features.h"
#include "kiln/ir/error.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/qa_data.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

size_t limit(const std::optional<int64_t>& count) {
  return count ? static_cast<size_t>(*count) : 0;  // 0: all
}

SquadDataset load_questions(const TrainingArguments& args, const std::string& path,
                            const std::optional<int64_t>& max_samples) {
  SquadDataset dataset = squad_head(load_squad(path), limit(max_samples));
  check(args.version_2_with_negative || !dataset.has_unanswerable(), path,
        "has questions without answers (SQuAD v2.0); add --version_2_with_negative");
  return dataset;
}

// --max_*_samples cut the questions, then the features, as run_qa.py does.
std::unique_ptr<TaskData> qa_split(const TrainingArguments& args, const Tokenizer& tokenizer,
                                   const std::string& path,
                                   const std::optional<int64_t>& max_samples, bool training) {
  SquadDataset dataset = load_questions(args, path, max_samples);
  QaFeatureOptions options{static_cast<size_t>(max_seq_length_for(args)),
                           static_cast<size_t>(args.doc_stride)};
  QaFeatures features = squad_features(tokenizer, dataset, options).head(limit(max_samples));
  if (training) return std::make_unique<QaTrainData>(std::move(features));
  QaPostprocessOptions post;
  post.version_2_with_negative = args.version_2_with_negative;
  post.n_best_size = static_cast<size_t>(args.n_best_size);
  post.max_answer_length = static_cast<size_t>(args.max_answer_length);
  post.null_score_diff_threshold = args.null_score_diff_threshold;
  return std::make_unique<QaEvalData>(std::move(dataset), std::move(features), post);
}

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

class QaTask : public Task {
 public:
  std::string_view name() const override { return "qa"; }
  ModelHead head() const override { return ModelHead::question_answering; }

  // BertForQuestionAnswering's qa_outputs gives start and end logits: num_labels is 2.
  void adapt_config(PretrainedConfig& config) const override {
    if (config.num_labels() != 2) config.set_num_labels(2);
  }

  TaskSplits load_data(const RunOptions& options, const Tokenizer& tokenizer,
                       PretrainedConfig& /*config*/, SplitsWanted wanted,
                       std::ostream& /*log*/) const override {
    const TrainingArguments& args = options.args;
    TaskSplits data;
    if (wanted.train) {
      data.train = qa_split(args, tokenizer,
                            required_file(args.train_file, "--train_file",
                                          "training needs --train_file"),
                            args.max_train_samples, true);
    }
    if (wanted.eval) {
      data.eval = qa_split(args, tokenizer,
                           required_file(args.validation_file, "--validation_file",
                                         "qa evaluation needs --validation_file (a SQuAD file)"),
                           args.max_eval_samples, false);
    }
    if (wanted.test) {
      data.test = qa_split(args, tokenizer,
                           required_file(args.test_file, "--test_file",
                                         "prediction needs --test_file"),
                           args.max_predict_samples, false);
    }
    return data;
  }

  // run_qa.py writes its answers with the stage as prefix: "eval_", and "predict_" below.
  nlohmann::json evaluate(Trainer& trainer, const TaskData& data,
                          const TrainingArguments& args) const override {
    ForwardOutputs outputs;
    nlohmann::json metrics = trainer.evaluate(data, "eval", &outputs);
    if (dist::is_main_process()) write_answers(data, outputs, args, "eval_");
    return metrics;
  }

  nlohmann::json predict(Trainer& trainer, const TaskData& data,
                         const TrainingArguments& args) const override {
    ForwardOutputs outputs = trainer.forward(data, false, "predicting batch");
    if (dist::is_main_process()) write_answers(data, outputs, args, "predict_");
    return speed_metrics("predict", outputs.seconds, static_cast<int64_t>(data.size()),
                         outputs.batches);
  }

 private:
  static void write_answers(const TaskData& data, const ForwardOutputs& outputs,
                            const TrainingArguments& args, const std::string& prefix) {
    const auto& questions = static_cast<const QaEvalData&>(data);  // load_data made it
    write_qa_prediction_files(args.output_dir, prefix, questions.predictions(outputs),
                              questions.options().version_2_with_negative);
  }
};

}  // namespace

const Task& qa_task() {
  static const QaTask task;
  return task;
}

}  // namespace kiln
