// The data of a run: train, evaluation and test files with run_glue.py's label rules, and the
// deterministic validation split of the train file.
#include <algorithm>
#include <numeric>

#include "kiln/io/dataset_order.h"
#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "setup.h"

namespace kiln::cli {
namespace {

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

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The first `limit` examples (--max_*_samples, as run_glue.py's dataset.select(range(limit))).
void keep_first(std::optional<ClassificationDataset>& data, const std::optional<int64_t>& limit) {
  if (!data || !limit || static_cast<size_t>(*limit) >= data->size()) return;
  std::vector<size_t> first(static_cast<size_t>(*limit));
  std::iota(first.begin(), first.end(), size_t{0});
  data = dataset_subset(*data, first);
}

}  // namespace

const std::string& required_file(const std::optional<std::string>& file, const char* flag,
                                 const char* why) {
  check_usage(file.has_value(), flag, why);
  return *file;
}

void report_held_out(std::ostream& log, size_t held_out, size_t total, std::string_view unit,
                     const std::string& source, const TrainingArguments& args) {
  log << "validation: holding out " << held_out << " of the " << total << " " << unit << " of "
      << source << " for evaluation (--validation_split_percentage "
      << args.validation_split_percentage
      << "); give --validation_file FILE to evaluate on another file, or change the percentage\n";
}

RunData load_run_data(const RunOptions& options, BertConfig& config, bool need_train,
                      bool need_eval, bool need_test, std::ostream& log) {
  const TrainingArguments& args = options.args;
  // A config with real label names fixes the label ids; training may replace them (below).
  std::vector<std::string> labels =
      is_default_label_names(config.id2label) ? std::vector<std::string>{} : config.id2label;
  // Without a validation file, a split is held out only for a run that evaluates; else training
  // uses the whole file.
  const bool split = need_eval && !args.validation_file && args.train_file &&
                     args.validation_split_percentage > 0;
  RunData data;
  std::optional<ClassificationDataset> train;
  if (need_train) {
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
    } else if (!labels.empty() && sorted(labels) == sorted(train->label_names)) {
      train = load(options, file, labels, true);  // run_glue.py keeps the model's label ids
    } else {
      if (!labels.empty()) {
        log << "warning: the model's labels (" << joined(labels) << ") don't match the "
            << "dataset's (" << joined(train->label_names) << "); using the dataset's\n";
      }
      config.id2label = labels = train->label_names;
    }
  } else if (need_eval && split) {
    train = load(options, *args.train_file, labels, true);
  }
  if (train && split) {
    double fraction = static_cast<double>(args.validation_split_percentage) / 100.0;
    auto [kept, held_out] = split_dataset(*train, fraction, args.data_seed.value_or(args.seed));
    report_held_out(log, held_out.size(), train->size(), "rows", train->source, args);
    train = std::move(kept);
    data.eval = std::move(held_out);
  }
  if (need_train) data.train = std::move(train);
  if (need_eval && !data.eval) {
    data.eval = load(options,
                     required_file(args.validation_file, "--validation_file",
                                   "evaluation needs --validation_file, or --train_file with "
                                   "--validation_split_percentage above 0"),
                     labels, true);
  }
  if (need_test) {
    data.test =
        load(options, required_file(args.test_file, "--test_file", "prediction needs --test_file"),
             labels, false);
  }
  keep_first(data.train, args.max_train_samples);
  keep_first(data.eval, args.max_eval_samples);
  keep_first(data.test, args.max_predict_samples);
  return data;
}

}  // namespace kiln::cli
