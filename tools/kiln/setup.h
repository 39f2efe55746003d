// What `kiln train`, `kiln evaluate` and `kiln predict` share: their flags, the backend, the
// model (an HF folder or a named config with a tokenizer) and the Trainer on it.
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
#include "kiln/io/tokenizer.h"
#include "kiln/tasks/task.h"
#include "kiln/train/train_step.h"
#include "kiln/train/trainer.h"
#include "kiln/train/training_arguments.h"

namespace kiln::cli {

// Every TrainingArguments flag, then the data-file flags, each with its default in --help; when
// `listed` names fields, --help lists only those (see training_arguments_add_flags).
void add_run_flags(CLI::App& command, RunOptions& options,
                   std::span<const std::string_view> listed = {});

// The TrainingArguments that `kiln evaluate` and `kiln predict` read, which their --help lists.
std::span<const std::string_view> evaluate_flag_names();
std::span<const std::string_view> predict_flag_names();

// --task when not given: with task_of_the_model (evaluate, predict) the trained model's (see
// task_of_model), else classification. Then HF's post-init (which checks every choice,
// --task and --device among them), whose errors are UsageErrors.
void finish_arguments(TrainingArguments& args, bool task_of_the_model);

// --device: auto is a TPU, else a GPU, through a PJRT plugin when one is found and opens, else
// the CPU backend; cpu, reference; pjrt:cpu|pjrt:cuda|pjrt:tpu (or tpu) on --pjrt_plugin or the
// first plugin of that kind found.
std::unique_ptr<Backend> make_backend(const TrainingArguments& args);

struct ModelSetup {
  std::unique_ptr<PretrainedConfig> config;
  std::optional<Tokenizer> tokenizer;
  TensorMap weights;  // filled by load_model_weights
};

// The config.json of --config_name (a folder or a file) or of --model_name_or_path; the preset
// name itself for --config_name tiny, ...; empty without either.
std::string config_path(const TrainingArguments& args);

// The tokenizer and config of --model_name_or_path, or of --config_name with --tokenizer_name,
// made to fit `task` (its head's architecture, qa's two labels).
ModelSetup load_model_config(const TrainingArguments& args, const Task& task);

// The weights of the task's model (BertForSequenceClassification, ...) from
// --model_name_or_path by name, reporting to `log` (as transformers) the parameters newly
// initialised and the checkpoint tensors left unused; new parameters (and a model from scratch)
// are initialised with --seed. Call once the config's labels are final. A config whose
// max_position_embeddings is below --max_seq_length is an error naming it.
void load_model_weights(ModelSetup& model, const Task& task, const TrainingArguments& args,
                        std::ostream& log);

// A Trainer on the model, which it takes.
std::unique_ptr<Trainer> make_trainer(const TrainingArguments& args, ModelSetup& model,
                                      Backend& backend);

// `kiln evaluate` and `kiln predict`: a Trainer on the trained model of --model_name_or_path
// and the data the command needs (the evaluation or the test split). Members are destroyed in
// reverse order, so the backend outlives the trainer.
struct SavedModelRun {
  std::unique_ptr<Backend> backend;
  const Task* task = nullptr;
  TaskSplits data;
  std::unique_ptr<Trainer> trainer;
};
SavedModelRun open_saved_model(RunOptions& options, const std::string& command,
                               SplitsWanted wanted);

}  // namespace kiln::cli
