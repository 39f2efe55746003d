// TrainingArguments: the settings of `kiln train`, with the names, defaults and checks of
// transformers.TrainingArguments plus the model/data arguments of run_glue.py.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/train/optimizer.h"

namespace kiln {

// When to log or evaluate (HF's IntervalStrategy).
enum class IntervalStrategy { no, steps, epoch };
// When to save (HF's SaveStrategy): "best" saves after each evaluation that improves
// metric_for_best_model.
enum class SaveStrategy { no, steps, epoch, best };

// HF's SchedulerType values that Kiln implements (see lr_schedule.h).
enum class LrSchedulerType {
  linear,
  cosine,
  cosine_with_restarts,
  polynomial,
  constant,
  constant_with_warmup,
  inverse_sqrt,
  reduce_lr_on_plateau,
  cosine_with_min_lr,
  warmup_stable_decay,
};

std::string_view interval_strategy_name(IntervalStrategy strategy);
std::string_view save_strategy_name(SaveStrategy strategy);
std::string_view lr_scheduler_type_name(LrSchedulerType type);
// nullopt for a name that is not a scheduler type.
std::optional<LrSchedulerType> lr_scheduler_type_from_name(std::string_view name);

// Field names and defaults as transformers.TrainingArguments (4.x) unless a comment says why
// not. The model/data fields follow run_glue.py's ModelArguments and DataTrainingArguments.
struct TrainingArguments {
  // Model and data.
  // classification, qa, mlm, ner or clm; unset: classification for training, the trained
  // model's task (its architectures: the CLI's task_of_model) for evaluation and prediction.
  std::optional<std::string> task;
  std::optional<std::string> model_name_or_path;
  std::optional<std::string> config_name;     // a preset name (tiny, ...) or a config.json path
  std::optional<std::string> tokenizer_name;  // a folder or a vocab.txt
  // A GLUE task (cola, stsb, ...): its metrics, as run_glue.py's --task_name; unset: accuracy
  // and F1, or MSE for regression. Kiln still reads the data from --train_file and friends.
  std::optional<std::string> task_name;
  std::optional<std::string> train_file;
  std::optional<std::string> validation_file;
  std::optional<std::string> test_file;
  std::optional<std::string> text_column_name;       // unset: "text", or the first of two columns
  std::optional<std::string> text_pair_column_name;  // unset: single texts
  std::optional<std::string> label_column_name;      // unset: "label", or the second of two columns
  // Unset: the task's default (max_seq_length_for); post-init sets it.
  std::optional<int64_t> max_seq_length;
  // run_glue.py defaults to true; Kiln pads to a few bucket lengths unless asked.
  bool pad_to_max_length = false;
  // Percent of the train file held out for evaluation when no validation file is given (run_mlm.py).
  int64_t validation_split_percentage = 5;
  // The first this many examples of each split, as run_qa.py / run_mlm.py cut them.
  std::optional<int64_t> max_train_samples;
  std::optional<int64_t> max_eval_samples;
  std::optional<int64_t> max_predict_samples;
  // Question answering (run_qa.py).
  int64_t doc_stride = 128;
  bool version_2_with_negative = false;
  int64_t n_best_size = 20;
  int64_t max_answer_length = 30;
  double null_score_diff_threshold = 0.0;
  // Masked language modeling (run_mlm.py).
  double mlm_probability = 0.15;
  bool line_by_line = false;
  // Token classification (run_ner.py).
  bool label_all_tokens = false;
  bool return_entity_level_metrics = false;
  // Causal language modeling (run_clm.py); unset: from the tokenizer and the model (tasks/clm.h).
  std::optional<int64_t> block_size;

  // Output.
  std::string output_dir = "trainer_output";
  bool overwrite_output_dir = false;
  bool do_train = false;
  bool do_eval = false;  // set by post-init when eval_strategy is not "no"
  bool do_predict = false;
  std::optional<std::string> resume_from_checkpoint;  // a checkpoint folder, or true = the latest

  // Batches and optimizer.
  int64_t per_device_train_batch_size = 8;
  int64_t per_device_eval_batch_size = 8;
  int64_t gradient_accumulation_steps = 1;
  double learning_rate = 5e-5;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  std::string optim = "adamw_torch";  // optimizer_names()
  std::string optim_args;            // "key=value,...": the optimizer's own hyper-parameters
  double max_grad_norm = 1.0;
  // transformers' LabelSmoother epsilon for the losses over class labels (0: plain cross entropy).
  double label_smoothing_factor = 0.0;
  // A step whose loss or gradient norm is NaN or infinite: "stop" ends training with an error
  // naming the step and the first non-finite tensor; "skip" reports it and leaves parameters and
  // optimizer state as they were (Kiln's own flag; HF has only logging_nan_inf_filter).
  std::string nan_inf_strategy = "stop";
  double num_train_epochs = 3.0;
  int64_t max_steps = -1;
  LrSchedulerType lr_scheduler_type = LrSchedulerType::linear;
  // The extra arguments of the scheduler (HF's scheduler_specific_kwargs), a JSON object.
  nlohmann::json lr_scheduler_kwargs = nlohmann::json::object();
  double warmup_ratio = 0.0;
  // An integer number of steps, or (as transformers 5) a ratio of the total when in (0, 1).
  double warmup_steps = 0.0;

  // Logging, evaluation, saving. Step counts below 1 are ratios of the total training steps.
  std::string logging_dir;  // empty: output_dir/runs/<date>_<host>, as HF
  IntervalStrategy logging_strategy = IntervalStrategy::steps;
  double logging_steps = 500;
  bool logging_first_step = false;
  IntervalStrategy eval_strategy = IntervalStrategy::no;
  bool eval_on_start = false;
  std::optional<double> eval_steps;  // unset: logging_steps
  SaveStrategy save_strategy = SaveStrategy::steps;
  double save_steps = 500;
  std::optional<int64_t> save_total_limit;
  bool load_best_model_at_end = false;
  std::optional<std::string> metric_for_best_model;  // "loss" when load_best_model_at_end
  std::optional<bool> greater_is_better;             // unset: false for "*loss", else true
  std::optional<int64_t> early_stopping_patience;    // set: stop after this many bad evaluations
  double early_stopping_threshold = 0.0;
  // HF's default is "none" (5.x) or every installed integration (4.x); Kiln writes a JSONL log.
  // Post-init turns "all" into every reporter and "none" into an empty list.
  std::vector<std::string> report_to = {"jsonl"};
  bool disable_tqdm = false;
  // transformers 5's "no", "all" (padding included) or "non_padding"; post-init turns a bool word
  // (4.x's bool field) into "all" or "no".
  std::string include_num_input_tokens_seen = "no";
  // HF's --debug: space-separated options (post-init splits and checks them). Kiln's: "metrics"
  // (the runtime's counters at every logging step).
  std::vector<std::string> debug;

  // Randomness, precision, hardware.
  int64_t seed = 42;
  std::optional<int64_t> data_seed;  // unset: seed
  // transformers 5's name: "random" shuffles every epoch, "sequential" keeps file order.
  std::string train_sampling_strategy = "random";
  bool bf16 = false;
  // Recompute each layer's activations in the backward pass instead of keeping them.
  bool gradient_checkpointing = false;
  std::string device = "auto";
  // Kiln's debugging switch: compiler passes to turn off, comma-separated ("cse,fusion").
  std::string disable_passes;
  // A PJRT plugin library for --device pjrt:* (unset: the plugins Kiln discovers).
  std::optional<std::string> pjrt_plugin;
  // Data parallel over the backend's devices: how many to train on (0: all of them).
  int64_t num_devices = 0;
  // Data parallel across processes (mpirun): what runs the collectives ("mpi"; unset: mpi when
  // the run has several processes), and how long one may wait before the run ends.
  std::optional<std::string> ddp_backend;
  int64_t ddp_timeout = 1800;
  // Compiled XLA programs kept between runs (unset: the user's cache folder; "" or "none": off).
  std::optional<std::string> compile_cache_dir;
  bool dataloader_drop_last = false;
};

// HF's __post_init__: fills derived defaults (do_eval, eval_steps, logging_dir,
// metric_for_best_model, greater_is_better, report_to, debug) and checks the combination; errors name
// the flag, e.g. "[--load_best_model_at_end] requires the save and eval strategy to match ...".
// Idempotent, so arguments read back from training_args.json pass again unchanged.
void training_arguments_post_init(TrainingArguments& args);

// Sets the fields named by the keys of a JSON object; an unknown key or a value of the wrong
// type is an error naming the key and `where` (the file).
void training_arguments_update(TrainingArguments& args, const nlohmann::json& object,
                               std::string_view where);
// The same for a JSON file (HF's HfArgumentParser.parse_json_file).
void training_arguments_load_json(TrainingArguments& args, const std::string& path);
// Every field under its HF name; unset optionals are null.
nlohmann::json training_arguments_to_json(const TrainingArguments& args);
// training_args.json (Kiln's counterpart of HF's training_args.bin), written atomically.
void training_arguments_write_json(const std::string& path, const TrainingArguments& args);

// Step counts of a run, as Trainer.set_initial_training_values and TrainerState.compute_steps
// derive them from the arguments and the number of batches in one epoch.
struct TrainingPlan {
  int64_t update_steps_per_epoch = 0;  // optimizer updates per epoch: ceil(batches / accumulation)
  int64_t max_steps = 0;               // optimizer updates in the whole run
  int64_t num_train_epochs = 0;        // epochs the loop enters (the last may stop early)
  int64_t logging_steps = 0;           // ratios resolved: ceil(max_steps * ratio)
  int64_t eval_steps = 0;              // 0 unless eval_strategy is "steps"
  int64_t save_steps = 0;
  int64_t warmup_steps = 0;  // HF's get_warmup_steps
};

// `args` must have passed post-init; `batches_per_epoch` counts training batches (before
// gradient accumulation) and must be positive.
TrainingPlan training_plan(const TrainingArguments& args, int64_t batches_per_epoch);

// HF's TrainingArguments.get_warmup_steps: warmup_steps when >= 1, else
// ceil(num_training_steps * ratio) with the ratio from warmup_steps (< 1) or warmup_ratio.
int64_t warmup_steps_for(const TrainingArguments& args, int64_t num_training_steps);

// --max_seq_length, else its default for --task: 384 for qa (run_qa.py's, which fits its
// doc_stride of 128), else 128 (run_glue.py's).
int64_t max_seq_length_for(const TrainingArguments& args);

// What --optim, --optim_args, --weight_decay and --adam_* ask of the optimizer.
OptimizerConfig optimizer_config(const TrainingArguments& args);

}  // namespace kiln
