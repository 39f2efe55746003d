// What `kiln train`, `kiln evaluate` and `kiln predict` share: their flags, the backend, the
// model (an HF folder or a named config with a tokenizer) and the data files of a run.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <ostream>
#include <string>
#include <vector>

#include "kiln/backends/backend.h"
#include "kiln/models/bert_config.h"
#include "kiln/io/dataset.h"
#include "kiln/io/tokenizer.h"
#include "kiln/train/task.h"
#include "kiln/train/train_step.h"
#include "kiln/train/trainer.h"
#include "kiln/train/training_arguments.h"

namespace kiln::cli {

struct RunOptions {
  TrainingArguments args;
  // Data files without a header line (the UCI sentiment TSV), and names for their columns.
  bool no_header = false;
  std::vector<std::string> column_names;
};

// Every TrainingArguments flag, then the data-file flags, each with its default in --help; when
// `listed` names fields, --help lists only those (see training_arguments_add_flags).
void add_run_flags(CLI::App& command, RunOptions& options,
                   std::span<const std::string_view> listed = {});

// The TrainingArguments that `kiln evaluate` and `kiln predict` read, which their --help lists.
std::span<const std::string_view> evaluate_flag_names();
std::span<const std::string_view> predict_flag_names();

// HF's post-init (which checks every choice, --task and --device among them); its errors are
// UsageErrors.
void finish_arguments(TrainingArguments& args);

// *file, or a UsageError "[flag] why" when the flag was not given.
const std::string& required_file(const std::optional<std::string>& file, const char* flag,
                                 const char* why);
// Says how many of the `total` `unit` of `source` a run holds out for evaluation, and how to
// change that.
void report_held_out(std::ostream& log, size_t held_out, size_t total, std::string_view unit,
                     const std::string& source, const TrainingArguments& args);

// --device: auto is a TPU, else a GPU, through a PJRT plugin when one is found and opens, else
// the CPU backend; cpu, reference; pjrt:cpu|pjrt:cuda|pjrt:tpu (or tpu) on --pjrt_plugin or the
// first plugin of that kind found.
std::unique_ptr<Backend> make_backend(const TrainingArguments& args);

struct ModelSetup {
  BertConfig config;
  std::optional<Tokenizer> tokenizer;
  TensorMap weights;  // filled by load_model_weights
};

// The tokenizer and config of --model_name_or_path, or of --config_name with --tokenizer_name.
ModelSetup load_model_config(const TrainingArguments& args);

// The weights of the --task model (BertForSequenceClassification, BertForQuestionAnswering or
// BertForMaskedLM) from --model_name_or_path by name, reporting to `log` (as transformers) the
// parameters newly initialised and the checkpoint tensors left unused; new parameters (and a
// model from scratch) are initialised with --seed. Call once config.id2label is final. A
// config whose max_position_embeddings is below --max_seq_length is an error naming it.
void load_model_weights(ModelSetup& model, const TrainingArguments& args, std::ostream& log);

struct RunData {
  std::optional<ClassificationDataset> train, eval, test;
};

// The data a run needs. Labels follow run_glue.py: the config's label set when it has real
// names, else the training file's (written into config.id2label); the evaluation data is
// --validation_file or, without one, a deterministic --validation_split_percentage split of
// --train_file.
RunData load_run_data(const RunOptions& options, BertConfig& config, bool need_train,
                      bool need_eval, bool need_test, std::ostream& log);

// The splits of a qa or mlm run (classification uses RunData): qa's training features and
// evaluation/prediction features (QaEvalData), or mlm's masked text blocks or lines.
struct TaskRunData {
  std::unique_ptr<TaskData> train, eval, test;
};

// --task qa: SQuAD files (.json nested or flat, .jsonl flat) with --max_seq_length, --doc_stride
// and the post-processing flags; --max_*_samples cut the questions, then the features, as
// run_qa.py does. mlm: text files, the validation split of run_mlm.py, --line_by_line, and
// --max_*_samples cutting the examples.
TaskRunData load_task_data(const TrainingArguments& args, const Tokenizer& tokenizer,
                           bool need_train, bool need_eval, bool need_test, std::ostream& log);

// `kiln evaluate` and `kiln predict`: a Trainer on the trained model of --model_name_or_path
// and the data the command needs (the evaluation or the test split). Members are destroyed in
// reverse order, so the backend outlives the trainer.
struct SavedModelRun {
  std::unique_ptr<Backend> backend;
  RunData data;            // classification
  TaskRunData task_data;   // qa, mlm
  std::unique_ptr<Trainer> trainer;
};
SavedModelRun open_saved_model(RunOptions& options, const std::string& command, bool need_eval,
                               bool need_test);

}  // namespace kiln::cli
