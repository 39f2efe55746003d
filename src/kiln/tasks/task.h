// A recipe as `kiln train`, `kiln evaluate` and `kiln predict` run it (run_glue.py, run_qa.py,
// run_mlm.py): its checks, its data and features, the model head it trains, its metrics and
// its prediction files. The commands take one path for every task; each task is one file
// implementing Task, registered in registry.cpp.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/io/tokenizer.h"
#include "kiln/models/model_family.h"
#include "kiln/train/task.h"
#include "kiln/train/trainer.h"
#include "kiln/train/training_arguments.h"

namespace kiln {

// The arguments of a run: TrainingArguments and the data-file flags.
struct RunOptions {
  TrainingArguments args;
  // Data files without a header line (the UCI sentiment TSV), and names for their columns.
  bool no_header = false;
  std::vector<std::string> column_names;
};

// The splits a command needs.
struct SplitsWanted {
  bool train = false;
  bool eval = false;
  bool test = false;
};

// A run's data as the Trainer takes it; the splits not wanted are null.
struct TaskSplits {
  std::unique_ptr<TaskData> train, eval, test;
};

class Task {
 public:
  virtual ~Task() = default;

  // --task: "classification", ...
  virtual std::string_view name() const = 0;
  // The head the task's model has (model_family.h).
  virtual ModelHead head() const = 0;
  // Optional: makes the config fit the head before any weights load (qa: two labels).
  virtual void adapt_config(PretrainedConfig& /*config*/) const {}
  // Reads the wanted splits from the data flags and makes them features; a task may settle the
  // config's labels from the training data (classification). Errors name the flag or file.
  virtual TaskSplits load_data(const RunOptions& options, const Tokenizer& tokenizer,
                               PretrainedConfig& config, SplitsWanted wanted,
                               std::ostream& log) const = 0;
  // Optional: the metrics of an evaluation ("eval_" keys) with the task's additions, after
  // writing its files (on the main process). By default, Trainer::evaluate's.
  virtual nlohmann::json evaluate(Trainer& trainer, const TaskData& data,
                                  const TrainingArguments& args) const;
  // Predicts every row of `data`, writes the prediction files into args.output_dir (on the
  // main process) and returns the "predict_" metrics.
  virtual nlohmann::json predict(Trainer& trainer, const TaskData& data,
                                 const TrainingArguments& args) const = 0;
};

// *file, or a UsageError "[flag] why" when the flag was not given.
const std::string& required_file(const std::optional<std::string>& file, const char* flag,
                                 const char* why);
// Says how many of the `total` `unit` of `source` a run holds out for evaluation, and how to
// change that.
void report_held_out(std::ostream& log, size_t held_out, size_t total, std::string_view unit,
                     const std::string& source, const TrainingArguments& args);

}  // namespace kiln
