// --task classification: run_glue.py's label rules and validation split, and its prediction files.
#include "kiln/tasks/classification.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <sstream>

#include "kiln/dist/communicator.h"
#include "kiln/io/atomic_file.h"
#include "kiln/io/dataset_order.h"
#include "kiln/ir/error.h"
#include "kiln/train/classification_data.h"
#include "kiln/train/trainer_metrics.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

ClassificationDataset load(const RunOptions& options, const std::string& path,
                           const std::vector<std::string>& label_names, bool require_labels) {
  const TrainingArguments& args = options.args;
  ClassificationOptions data;
  data.table.header = !options.no_header;
  data.table.column_names = options.column_names;
  data.columns.text = args.text_column_name.value_or("");
  data.columns.text_pair = args.text_pair_column_name.value_or("");
  data.columns.label = args.label_column_name.value_or("");
  data.label_names = label_names;
  data.require_labels = require_labels;
  return load_classification_dataset(path, data);
}

// The first `limit` examples (--max_*_samples, as run_glue.py's dataset.select(range(limit))).
void keep_first(std::optional<ClassificationDataset>& data, const std::optional<int64_t>& limit) {
  if (!data || !limit || static_cast<size_t>(*limit) >= data->size()) return;
  std::vector<size_t> first(static_cast<size_t>(*limit));
  std::iota(first.begin(), first.end(), size_t{0});
  data = dataset_subset(*data, first);
}

struct ClassificationFiles {
  std::optional<ClassificationDataset> train, eval, test;
};

// Labels follow run_glue.py: the config's label set when it has real names, else the training
// file's (written into config.id2label); the evaluation data is --validation_file or, without
// one, a deterministic --validation_split_percentage split of --train_file.
ClassificationFiles load_files(const RunOptions& options, PretrainedConfig& config,
                               SplitsWanted wanted, std::ostream& log) {
  const TrainingArguments& args = options.args;
  // A config with real label names fixes the label ids; training may replace them (below).
  std::vector<std::string> labels =
      is_default_label_names(config.id2label) ? std::vector<std::string>{} : config.id2label;
  // Without a validation file, a split is held out only for a run that evaluates; else training
  // uses the whole file.
  const bool split = wanted.eval && !args.validation_file && args.train_file &&
                     args.validation_split_percentage > 0;
  ClassificationFiles data;
  std::optional<ClassificationDataset> train;
  if (wanted.train) {
    const std::string& file =
        required_file(args.train_file, "--train_file", "training needs --train_file");
    train = load(options, file, {}, true);
    // The loss follows the training labels, as run_classification.py sets problem_type.
    if (train->label_kind == LabelKind::multi_label) {
      config.problem_type = "multi_label_classification";
    } else if (config.problem_type == "multi_label_classification") {
      config.problem_type.reset();  // the Trainer picks it from the labels
    }
    if (train->label_kind == LabelKind::regression) {
      config.set_num_labels(1);
      labels.clear();
    } else if (!labels.empty() && same_label_set(labels, train->label_names)) {
      train = load(options, file, labels, true);  // run_glue.py keeps the model's label ids
    } else {
      if (!labels.empty()) warn_labels_replaced(log, labels, train->label_names);
      config.id2label = labels = train->label_names;
    }
  } else if (wanted.eval && split) {
    train = load(options, *args.train_file, labels, true);
  }
  if (train && split) {
    double fraction = static_cast<double>(args.validation_split_percentage) / 100.0;
    auto [kept, held_out] = split_dataset(*train, fraction, args.data_seed.value_or(args.seed));
    report_held_out(log, held_out.size(), train->size(), "rows", train->source, args);
    train = std::move(kept);
    data.eval = std::move(held_out);
  }
  if (wanted.train) data.train = std::move(train);
  if (wanted.eval && !data.eval) {
    data.eval = load(options,
                     required_file(args.validation_file, "--validation_file",
                                   "evaluation needs --validation_file, or --train_file with "
                                   "--validation_split_percentage above 0"),
                     labels, true);
  }
  if (wanted.test) {
    data.test =
        load(options, required_file(args.test_file, "--test_file", "prediction needs --test_file"),
             labels, false);
  }
  keep_first(data.train, args.max_train_samples);
  keep_first(data.eval, args.max_eval_samples);
  keep_first(data.test, args.max_predict_samples);
  return data;
}

// A split tokenized for the Trainer, after the checks the Trainer makes of labelled data.
std::unique_ptr<TaskData> rows(std::optional<ClassificationDataset>& data,
                               const Tokenizer& tokenizer, const PretrainedConfig& config,
                               const TrainingArguments& args, bool first_row_names_it) {
  if (!data) return nullptr;
  if (data->label_kind != LabelKind::none) {
    check_classification_labels(*data, config, first_row_names_it ? data->where(0) : data->source);
  }
  return std::make_unique<ClassificationData>(
      std::make_shared<const ClassificationDataset>(std::move(*data)), tokenizer,
      static_cast<size_t>(max_seq_length_for(args)), args.task_name.value_or(""));
}

// predict_results.txt ("index\tprediction", as run_glue.py) and predict_results.jsonl (label
// name and probabilities per example).
void write_predictions(const PredictionOutput& out, const std::vector<std::string>& names,
                       size_t examples, const fs::path& folder) {
  std::ostringstream text, jsonl;
  text << "index\tprediction\n";
  for (size_t i = 0; i < examples; ++i) {
    nlohmann::json line = {{"index", i}};
    if (!out.label_sets.empty()) {
      // run_classification.py writes the label list as Python prints it: ['a', 'b'].
      const auto labels = static_cast<size_t>(out.num_labels);
      std::vector<std::string> chosen;
      for (int32_t id : out.label_sets[i]) chosen.push_back(names[static_cast<size_t>(id)]);
      text << i << "\t[";
      for (size_t k = 0; k < chosen.size(); ++k) text << (k ? ", '" : "'") << chosen[k] << "'";
      text << "]\n";
      line["prediction"] = chosen;
      line["label_ids"] = out.label_sets[i];
      nlohmann::json by_name = nlohmann::json::object();
      for (size_t c = 0; c < labels; ++c) {
        by_name[names[c]] = 1.0 / (1.0 + std::exp(-out.logits[i * labels + c]));
      }
      line["probabilities"] = by_name;
    } else if (out.classes.empty()) {
      char value[32];
      std::snprintf(value, sizeof value, "%3.3f", out.values[i]);
      text << i << '\t' << value << '\n';
      line["prediction"] = out.values[i];
    } else {
      const auto labels = static_cast<size_t>(out.num_labels);
      std::vector<double> probabilities = softmax_rows(
          std::span<const double>(out.logits).subspan(i * labels, labels), out.num_labels);
      const std::string& name = names[static_cast<size_t>(out.classes[i])];
      text << i << '\t' << name << '\n';
      line["prediction"] = name;
      line["label_id"] = out.classes[i];
      nlohmann::json by_name = nlohmann::json::object();
      for (size_t c = 0; c < labels; ++c) by_name[names[c]] = probabilities[c];
      line["probabilities"] = by_name;
    }
    jsonl << line.dump() << '\n';
  }
  fs::create_directories(folder);
  write_file_atomically((folder / "predict_results.txt").string(), text.str());
  write_file_atomically((folder / "predict_results.jsonl").string(), jsonl.str());
  std::cerr << "wrote " << examples << " predictions to "
            << (folder / "predict_results.txt").string() << " and predict_results.jsonl\n";
}

class ClassificationTask : public Task {
 public:
  std::string_view name() const override { return "classification"; }
  ModelHead head() const override { return ModelHead::sequence_classification; }

  TaskSplits load_data(const RunOptions& options, const Tokenizer& tokenizer,
                       PretrainedConfig& config, SplitsWanted wanted,
                       std::ostream& log) const override {
    ClassificationFiles files = load_files(options, config, wanted, log);
    TaskSplits splits;
    splits.train = rows(files.train, tokenizer, config, options.args, false);
    splits.eval = rows(files.eval, tokenizer, config, options.args, true);
    splits.test = rows(files.test, tokenizer, config, options.args, true);
    return splits;
  }

  nlohmann::json predict(Trainer& trainer, const TaskData& data,
                         const TrainingArguments& args) const override {
    PredictionOutput out = trainer.predict(static_cast<const ClassificationData&>(data));
    if (dist::is_main_process()) {
      write_predictions(out, trainer.config().id2label, data.size(), args.output_dir);
    }
    return out.metrics;
  }
};

}  // namespace

const Task& classification_task() {
  static const ClassificationTask task;
  return task;
}

}  // namespace kiln
