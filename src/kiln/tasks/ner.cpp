// --task ner: run_ner.py's word and tag lists, label list and label alignment, seqeval metrics
// and predictions.txt.
#include "kiln/tasks/ner.h"

#include <filesystem>
#include <iostream>

#include "kiln/dist/communicator.h"
#include "kiln/io/atomic_file.h"
#include "kiln/io/dataset.h"
#include "kiln/ir/error.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/ner_data.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// run_ner.py's labels: the training file's (get_label_list), in the model's order when the
// model's config names the same ones; they become the config's id2label. Without training, the
// model's.
std::vector<std::string> settle_labels(const NerDataset* train, PretrainedConfig& config,
                                       std::ostream& log) {
  if (!train) return config.id2label;
  std::vector<std::string> labels = ner_label_list(*train);
  check(!labels.empty(), train->source, "has no tags");
  if (!is_default_label_names(config.id2label)) {
    if (same_label_set(config.id2label, labels)) {
      labels = config.id2label;
    } else {
      warn_labels_replaced(log, config.id2label, labels);
    }
  }
  config.id2label = labels;
  return labels;
}

// run_ner.py loads GPT-2's and RoBERTa's tokenizers with add_prefix_space=True, as word lists
// need (Tokenizer::encode_words); WordPiece is unchanged.
Tokenizer words_tokenizer(const Tokenizer& tokenizer) {
  Tokenizer words = tokenizer;
  words.set_add_prefix_space(true);
  return words;
}

std::unique_ptr<TaskData> ner_split(NerDataset dataset, const std::optional<int64_t>& max_samples,
                                    const Tokenizer& tokenizer,
                                    const std::vector<std::string>& labels,
                                    const TrainingArguments& args) {
  if (max_samples) dataset.keep_first(static_cast<size_t>(*max_samples));
  NerFeatureOptions options;
  options.max_seq_length = static_cast<size_t>(max_seq_length_for(args));
  options.label_all_tokens = args.label_all_tokens;
  NerFeatures features = ner_features(tokenizer, dataset, labels, options);
  return std::make_unique<NerData>(std::move(dataset), std::move(features), labels,
                                   args.return_entity_level_metrics);
}

// run_ner.py's predictions.txt: per example, its predicted tags separated by spaces.
void write_predictions(const std::vector<std::vector<std::string>>& tags, const fs::path& folder) {
  std::string text;
  for (const std::vector<std::string>& row : tags) {
    for (size_t i = 0; i < row.size(); ++i) text += (i ? " " : "") + row[i];
    text += '\n';
  }
  fs::create_directories(folder);
  write_file_atomically((folder / "predictions.txt").string(), text);
  std::cerr << "wrote the tags of " << tags.size() << " examples to "
            << (folder / "predictions.txt").string() << '\n';
}

class NerTask : public Task {
 public:
  std::string_view name() const override { return "ner"; }
  ModelHead head() const override { return ModelHead::token_classification; }

  TaskSplits load_data(const RunOptions& options, const Tokenizer& tokenizer,
                       PretrainedConfig& config, SplitsWanted wanted,
                       std::ostream& log) const override {
    const TrainingArguments& args = options.args;
    const NerColumns columns{args.text_column_name.value_or(""),
                             args.label_column_name.value_or("")};
    std::optional<NerDataset> train;
    if (wanted.train) {
      train = read_ner_dataset(
          required_file(args.train_file, "--train_file", "training needs --train_file"), columns,
          true);
    }
    const std::vector<std::string> labels = settle_labels(train ? &*train : nullptr, config, log);
    const Tokenizer words = words_tokenizer(tokenizer);
    TaskSplits data;
    if (train) {
      data.train = ner_split(std::move(*train), args.max_train_samples, words, labels, args);
    }
    if (wanted.eval) {
      NerDataset eval = read_ner_dataset(
          required_file(args.validation_file, "--validation_file",
                        "ner evaluation needs --validation_file (word and tag lists)"),
          columns, true);
      data.eval = ner_split(std::move(eval), args.max_eval_samples, words, labels, args);
    }
    if (wanted.test) {
      NerDataset test = read_ner_dataset(
          required_file(args.test_file, "--test_file", "prediction needs --test_file"), columns,
          false);
      data.test = ner_split(std::move(test), args.max_predict_samples, words, labels, args);
    }
    return data;
  }

  // run_ner.py's trainer.predict(metric_key_prefix="predict"): the loss and seqeval when the
  // file has tags, and predictions.txt.
  nlohmann::json predict(Trainer& trainer, const TaskData& data,
                         const TrainingArguments& args) const override {
    const auto& rows = static_cast<const NerData&>(data);  // load_data made it
    ForwardOutputs outputs = trainer.forward(rows, rows.has_labels(), "predicting batch");
    nlohmann::json metrics = nlohmann::json::object();
    if (rows.has_labels()) {
      metrics["predict_loss"] = outputs.loss_sum / static_cast<double>(rows.size());
      const nlohmann::json scores = rows.metrics(outputs);
      for (const auto& [key, value] : scores.items()) metrics["predict_" + key] = value;
    }
    metrics.update(speed_metrics("predict", outputs.seconds, static_cast<int64_t>(rows.size()),
                                 outputs.batches));
    if (dist::is_main_process()) write_predictions(rows.predicted_tags(outputs), args.output_dir);
    return metrics;
  }
};

}  // namespace

const Task& ner_task() {
  static const NerTask task;
  return task;
}

}  // namespace kiln
