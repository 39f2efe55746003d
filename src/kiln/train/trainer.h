// transformers.Trainer: the training loop over compiled step programs, evaluation, checkpoints
// and resuming, callbacks and early stopping, logging; for any model family and head
// (model_family.h), whose data come as TaskData (task.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kiln/io/collate.h"
#include "kiln/io/dataset.h"
#include "kiln/io/tokenizer.h"
#include "kiln/train/checkpoint_state.h"
#include "kiln/train/task.h"
#include "kiln/train/lr_schedule.h"
#include "kiln/train/train_step.h"
#include "kiln/train/trainer_callbacks.h"
#include "kiln/train/trainer_programs.h"
#include "kiln/train/trainer_state.h"

namespace kiln {

class JsonlLogWriter;
class TensorBoardWriter;
class ProgressBar;
class ClassificationData;

// What predict() returns: one row of logits per example (num_labels values each), the
// predicted class (argmax) or regression value, and metrics when the data has labels.
struct PredictionOutput {
  int64_t num_labels = 0;
  std::vector<double> logits;    // [examples, num_labels], row-major
  std::vector<int64_t> classes;  // classification
  std::vector<double> values;    // regression
  std::vector<std::vector<int32_t>> label_sets;  // multi-label: each row's labels (logit > 0)
  nlohmann::json metrics = nlohmann::json::object();
};

// The step `args` ask for on `replicas` devices: optimizer, clipping, accumulation, the
// non-finite policy and the compiler's switches (--bf16, --gradient_checkpointing, ...).
TrainStepConfig step_config(const TrainingArguments& args, int replicas);

class Trainer {
 public:
  // Trains the model of `config`'s family with the head its architectures name (sequence
  // classification when none: see config_head). `weights` holds every parameter of that model
  // (ModelFamily::parameters) by Hugging Face name; `tokenizer` is saved beside the model. Messages (checkpoints, compiles, logs, the
  // progress bar unless args.disable_tqdm) go to `log`. `args` must have passed post-init.
  // Programs compile through a runtime of the trainer's own on `backend`.
  Trainer(TrainingArguments args, const PretrainedConfig& config, TensorMap weights,
          Tokenizer tokenizer, Backend& backend, std::ostream& log);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Runs after the built-in callbacks (EarlyStoppingCallback when early_stopping_patience is set).
  void add_callback(std::shared_ptr<TrainerCallback> callback);

  // Trains on `train_data`, evaluating on `eval_data` (may be null when eval_strategy is "no")
  // and saving checkpoints as the arguments say; continues the run saved in `resume` (a
  // checkpoint folder) when given. Returns HF's train metrics: train_runtime,
  // train_samples_per_second, train_steps_per_second, total_flos, train_loss, epoch, and
  // train_compiles (the programs compiled). Logs the runtime's counters at the end (and at every
  // logging step with --debug metrics).
  nlohmann::json train(const ClassificationDataset& train_data,
                       const ClassificationDataset* eval_data,
                       const std::optional<std::filesystem::path>& resume = std::nullopt);
  // The same for any task's data (which must outlive the call).
  nlohmann::json train(const TaskData& train_data, const TaskData* eval_data,
                       const std::optional<std::filesystem::path>& resume = std::nullopt);

  // `prefix`_loss (mean over the examples), _accuracy and _f1 (classes) or _mse (regression), or
  // --task_name's GLUE metrics,
  // _runtime, _samples_per_second, _steps_per_second, and epoch when training has run; logged
  // like HF's Trainer.evaluate.
  nlohmann::json evaluate(const ClassificationDataset& data, const std::string& prefix = "eval");
  // Any task: `prefix`_loss when the data has labels, then the data's metrics, prefixed.
  // `outputs`, when given, receives the forward pass (qa's prediction files are made from it).
  nlohmann::json evaluate(const TaskData& data, const std::string& prefix = "eval",
                          ForwardOutputs* outputs = nullptr);

  // The forward pass without dropout over every row of `data`, in order (rows of padding
  // dropped); the loss when with_labels. Unless disable_tqdm, a progress bar counts the batches
  // as `progress_unit` ("evaluating batch 3/19 ...").
  ForwardOutputs forward(const TaskData& data, bool with_labels,
                         std::string_view progress_unit = "evaluating batch");

  // Logits and predictions for every example; metrics under "test_" when it has labels.
  PredictionOutput predict(const ClassificationDataset& data);
  // The same for rows already tokenized (whose labels, if any, the caller checked).
  PredictionOutput predict(const ClassificationData& rows);

  // config.json, model.safetensors, the tokenizer files and training_args.json into `folder`
  // (HF's Trainer.save_model).
  void save_model(const std::string& folder) const;

  const TrainerState& state() const { return state_; }
  // The signal (SIGINT, SIGTERM) that ended the last train() early after saving a checkpoint of
  // its last step (see stop_signal.h), or 0 when training ran to its end.
  int stopped_by_signal() const { return stopped_by_signal_; }
  // Host copies of the weights (they live on the devices while training).
  TensorMap weights() const { return train_state_.params(); }
  // The devices (replicas) the training steps run on.
  int replicas() const { return train_state_.replicas(); }
  const PretrainedConfig& config() const { return *config_; }
  int64_t compiles() const { return runtime_.counters().compiles; }
  RuntimeCounters runtime_counters() const { return runtime_.counters(); }

 private:
  // trainer.cpp: the loop. start_run checks the data, plans the steps, sets up the state (or
  // restores it from `resume`) and the reporters.
  TrainingPlan start_run(const TaskData& train_data, const TaskData* eval_data,
                         const std::optional<std::filesystem::path>& resume);
  void run_epoch(const TaskData& data, int64_t epoch);
  // The feeds of micro-step `micro_step`, the global batch `rows`: one slice per replica, rows
  // dealt out in turn (as DistributedSampler deals an epoch's order), all padded alike, with
  // dropout keyed by `seed`. Runs on the batch-preparing thread: reads no changing member.
  ReplicaFeeds replica_feeds(const TaskData& data, const std::vector<size_t>& rows,
                             const CollateOptions& collate, int64_t epoch, int64_t micro_step,
                             int64_t seed) const;
  // Reads back the updates queued since the last call, in order: their losses, gradient norms
  // and finite flags, then the callbacks' on_step_end. On host backends every update is read
  // at once; on a device only at logging, evaluation, save and stop points.
  void read_back_updates();
  // An update whose loss or gradient norm is not finite: an Error (--nan_inf_strategy stop) or
  // a warning (skip); returns the loss to count in the logged average.
  double handle_nonfinite(double step_loss, const StepResult& result, int64_t step);
  CollateOptions collate_options(int64_t batch_size) const;
  // trainer_evaluate.cpp: the bar of an evaluation or prediction over `batches` batches, on the
  // main process unless disable_tqdm (else null); redrawn in place when log_ is a terminal.
  std::unique_ptr<ProgressBar> batch_progress(size_t batches, std::string_view unit) const;
  bool log_is_tty() const;
  // trainer_log.cpp: logging and the log/evaluate/save decisions.
  void log(nlohmann::json logs);
  void note(const std::string& line);
  void maybe_log_save_evaluate();
  // trainer_checkpoint.cpp.
  void save_checkpoint();
  RngState resume_from(const std::filesystem::path& folder);
  // Records metric_for_best_model's value when it is a new best; returns whether it was.
  bool determine_best_metric(const nlohmann::json& metrics);
  void load_best_model();
  void load_weights(const std::string& file);

  TrainingArguments args_;
  std::unique_ptr<PretrainedConfig> config_;
  const ModelFamily& family_;
  ModelHead head_;
  Tokenizer tokenizer_;
  std::ostream& log_;
  Runtime runtime_;
  TrainState train_state_;
  ModelPrograms programs_;
  TrainerState state_;
  TrainerControl control_;
  std::vector<std::shared_ptr<TrainerCallback>> callbacks_;

  // The run in progress (train()).
  const TaskData* eval_data_ = nullptr;
  std::optional<LrSchedule> schedule_;
  RngState position_;
  bool integer_labels_ = true;
  int64_t batches_per_epoch_ = 0;  // micro-batches: the dropout offset counts them
  double loss_since_log_ = 0.0;    // HF's tr_loss: the step losses since the last log
  double total_loss_ = 0.0;
  double last_grad_norm_ = 0.0;
  struct QueuedUpdate;
  std::vector<QueuedUpdate> queued_;  // updates not read back yet, in order
  int64_t last_logged_step_ = 0;
  int64_t last_saved_step_ = -1;
  int stopped_by_signal_ = 0;
  int64_t parameters_ = 0;
  int64_t non_embedding_params_ = 0;
  bool memory_planned_ = false;  // the memory plan line is logged once, before the first step
  std::unique_ptr<JsonlLogWriter> jsonl_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  std::unique_ptr<ProgressBar> progress_;
};

}  // namespace kiln
