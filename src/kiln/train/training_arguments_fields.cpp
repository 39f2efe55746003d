// The TrainingArguments field table, in the order and wording of HF's --help where it has one.
#include "kiln/train/training_arguments_fields.h"

#include <algorithm>
#include <array>

#include "kiln/train/glue_metrics.h"
#include "kiln/train/optimizer.h"
#include "kiln/train/task.h"

namespace kiln {
namespace {

using A = TrainingArguments;
constexpr std::string_view kModel = "Model and data";
constexpr std::string_view kTrain = "Training";
constexpr std::string_view kLog = "Logging, evaluation and checkpoints";
constexpr std::string_view kRun = "Randomness and hardware";

// The choices of text fields; make_backend and the tasks registry act on them.
constexpr std::array<std::string_view, 7> kDevices = {
    "auto", "cpu", "reference", "pjrt:cpu", "pjrt:cuda", "pjrt:tpu", "tpu"};
constexpr std::array<std::string_view, 2> kNanInfStrategies = {"stop", "skip"};
constexpr std::array<std::string_view, 4> kReporters = {"none", "jsonl", "tensorboard", "all"};
constexpr std::array<std::string_view, 3> kTokenCounts = {"no", "all", "non_padding"};
constexpr std::array<std::string_view, 2> kSamplingStrategies = {"random", "sequential"};

const std::array kFields = {
    ArgumentField{"task", &A::task, kModel,
                  "The task: classification (run_glue.py), qa (extractive question answering, "
                  "run_qa.py), mlm (masked language modeling, run_mlm.py), ner (token "
                  "classification, run_ner.py) or clm (causal language modeling, run_clm.py). "
                  "Default: "
                  "classification for train; the trained model's (its config.json's "
                  "architectures) for evaluate and predict.",
                  task_names()},
    ArgumentField{"model_name_or_path", &A::model_name_or_path, kModel,
                  "A folder with config.json, model.safetensors and tokenizer files."},
    ArgumentField{"config_name", &A::config_name, kModel,
                  "A named configuration (tiny, ...) or a config.json path, to start from new "
                  "weights; also overrides the config of --model_name_or_path."},
    ArgumentField{"tokenizer_name", &A::tokenizer_name, kModel,
                  "A tokenizer folder or a vocab.txt, if not the model's."},
    ArgumentField{"task_name", &A::task_name, kModel,
                  "The GLUE task whose metrics evaluation reports, as run_glue.py (cola: "
                  "matthews_correlation; stsb: pearson, spearmanr; mrpc, qqp: accuracy, f1; "
                  "others: accuracy). The data still comes from the given files.",
                  glue_task_names()},
    ArgumentField{"train_file", &A::train_file, kModel, "Training data: a CSV, TSV or JSONL file."},
    ArgumentField{"validation_file", &A::validation_file, kModel,
                  "Evaluation data: a CSV, TSV or JSONL file."},
    ArgumentField{"test_file", &A::test_file, kModel,
                  "Prediction data: a CSV, TSV or JSONL file (labels optional)."},
    ArgumentField{"text_column_name", &A::text_column_name, kModel,
                  "The text column (default: text, or the first of two columns; ner: tokens, "
                  "or the first column)."},
    ArgumentField{"text_pair_column_name", &A::text_pair_column_name, kModel,
                  "The second text column of sentence-pair tasks."},
    ArgumentField{"label_column_name", &A::label_column_name, kModel,
                  "The label column (default: label, or the second of two columns; ner: "
                  "ner_tags, or the second column)."},
    ArgumentField{"max_seq_length", &A::max_seq_length, kModel,
                  "The maximum total input length after tokenization; longer inputs are "
                  "truncated. Default: 384 for qa (as run_qa.py), else 128."},
    ArgumentField{"pad_to_max_length", &A::pad_to_max_length, kModel,
                  "Pad every batch to max_seq_length instead of a few bucket lengths."},
    ArgumentField{"validation_split_percentage", &A::validation_split_percentage, kModel,
                  "The percentage of the train file used for evaluation when there is no "
                  "validation file."},
    ArgumentField{"max_train_samples", &A::max_train_samples, kModel,
                  "Truncate the number of training examples (and, for qa, features) to this "
                  "value."},
    ArgumentField{"max_eval_samples", &A::max_eval_samples, kModel,
                  "Truncate the number of evaluation examples to this value."},
    ArgumentField{"max_predict_samples", &A::max_predict_samples, kModel,
                  "Truncate the number of prediction examples to this value."},
    ArgumentField{"doc_stride", &A::doc_stride, kModel,
                  "qa: when splitting up a long document into chunks, how much stride to take "
                  "between chunks."},
    ArgumentField{"version_2_with_negative", &A::version_2_with_negative, kModel,
                  "qa: if true, some of the examples do not have an answer (SQuAD v2.0)."},
    ArgumentField{"n_best_size", &A::n_best_size, kModel,
                  "qa: the total number of n-best predictions to generate when looking for an "
                  "answer."},
    ArgumentField{"max_answer_length", &A::max_answer_length, kModel,
                  "qa: the maximum length of an answer that can be generated, in tokens."},
    ArgumentField{"null_score_diff_threshold", &A::null_score_diff_threshold, kModel,
                  "qa: the threshold used to select the null answer: if the best answer has a "
                  "score that is less than the score of the null answer minus this threshold, "
                  "the null answer is selected. Only useful with version_2_with_negative."},
    ArgumentField{"mlm_probability", &A::mlm_probability, kModel,
                  "mlm: ratio of tokens to mask for masked language modeling loss."},
    ArgumentField{"line_by_line", &A::line_by_line, kModel,
                  "mlm: whether distinct lines of text in the dataset are to be handled as "
                  "distinct sequences."},
    ArgumentField{"label_all_tokens", &A::label_all_tokens, kModel,
                  "ner: whether to put the label for one word on all tokens of generated by that "
                  "word or just on the one (in which case the other tokens will have a padding "
                  "index)."},
    ArgumentField{"return_entity_level_metrics", &A::return_entity_level_metrics, kModel,
                  "ner: whether to return all the entity levels during evaluation or just the "
                  "overall ones."},
    ArgumentField{"block_size", &A::block_size, kModel,
                  "clm: the length of the training blocks the text is cut into. Default: the "
                  "tokenizer's model_max_length, or min(1024, n_positions) when that is longer "
                  "than the model takes."},

    ArgumentField{"output_dir", &A::output_dir, kTrain,
                  "The output directory where the model predictions and checkpoints will be "
                  "written."},
    ArgumentField{"overwrite_output_dir", &A::overwrite_output_dir, kTrain,
                  "Overwrite the content of the output directory."},
    ArgumentField{"do_train", &A::do_train, kTrain, "Whether to run training."},
    ArgumentField{"do_eval", &A::do_eval, kTrain, "Whether to run eval on the dev set."},
    ArgumentField{"do_predict", &A::do_predict, kTrain,
                  "Whether to run predictions on the test set."},
    ArgumentField{"resume_from_checkpoint", &A::resume_from_checkpoint, kTrain,
                  "A checkpoint folder to continue from, or true for the latest checkpoint in "
                  "output_dir."},
    ArgumentField{"per_device_train_batch_size", &A::per_device_train_batch_size, kTrain,
                  "Batch size per device for training."},
    ArgumentField{"per_device_eval_batch_size", &A::per_device_eval_batch_size, kTrain,
                  "Batch size per device for evaluation."},
    ArgumentField{"gradient_accumulation_steps", &A::gradient_accumulation_steps, kTrain,
                  "Number of updates steps to accumulate before performing a backward/update "
                  "pass."},
    ArgumentField{"learning_rate", &A::learning_rate, kTrain,
                  "The initial learning rate for the optimizer."},
    ArgumentField{"weight_decay", &A::weight_decay, kTrain,
                  "Weight decay for the optimizer (not applied to biases and LayerNorm "
                  "weights)."},
    ArgumentField{"adam_beta1", &A::adam_beta1, kTrain, "Beta1 for AdamW optimizer."},
    ArgumentField{"adam_beta2", &A::adam_beta2, kTrain, "Beta2 for AdamW optimizer."},
    ArgumentField{"adam_epsilon", &A::adam_epsilon, kTrain, "Epsilon for AdamW optimizer."},
    ArgumentField{"optim", &A::optim, kTrain,
                  "The optimizer to use, built as transformers' Trainer builds it "
                  "(adamw_torch_fused is the same math as adamw_torch).",
                  optimizer_names()},
    ArgumentField{"optim_args", &A::optim_args, kTrain,
                  "Optional arguments to supply to optimizer: key=value,... (sgd: momentum, "
                  "dampening, nesterov; adagrad: lr_decay, eps; rmsprop: momentum, alpha, eps, "
                  "centered)."},
    ArgumentField{"max_grad_norm", &A::max_grad_norm, kTrain,
                  "Max gradient norm (0 turns clipping off)."},
    ArgumentField{"label_smoothing_factor", &A::label_smoothing_factor, kTrain,
                  "The label smoothing epsilon to apply (zero means no label smoothing), to the "
                  "losses over class labels (classification, mlm, ner)."},
    ArgumentField{"nan_inf_strategy", &A::nan_inf_strategy, kTrain,
                  "When a step's loss or gradient norm is NaN or infinite: stop (report the step "
                  "and the first non-finite tensor, then fail) or skip (report it and leave the "
                  "weights and optimizer state unchanged).",
                  kNanInfStrategies},
    ArgumentField{"num_train_epochs", &A::num_train_epochs, kTrain,
                  "Total number of training epochs to perform."},
    ArgumentField{"max_steps", &A::max_steps, kTrain,
                  "If > 0: set total number of training steps to perform. Override "
                  "num_train_epochs."},
    ArgumentField{"lr_scheduler_type", &A::lr_scheduler_type, kTrain,
                  "The scheduler type to use (reduce_lr_on_plateau steps with the evaluation "
                  "metric, metric_for_best_model, and needs an eval strategy)."},
    ArgumentField{"lr_scheduler_kwargs", &A::lr_scheduler_kwargs, kTrain,
                  "Extra arguments of the scheduler, a JSON object: num_cycles (cosine, "
                  "cosine_with_restarts, cosine_with_min_lr, warmup_stable_decay); lr_end, power "
                  "(polynomial); timescale (inverse_sqrt); min_lr or min_lr_rate (one is needed "
                  "by cosine_with_min_lr); num_decay_steps (needed), num_stable_steps, "
                  "warmup_type, decay_type, min_lr_ratio (warmup_stable_decay); mode, factor, "
                  "patience, threshold, threshold_mode, cooldown, min_lr, eps "
                  "(reduce_lr_on_plateau). E.g. '{\"num_cycles\": 2}'."},
    ArgumentField{"warmup_ratio", &A::warmup_ratio, kTrain,
                  "Linear warmup over warmup_ratio fraction of total steps."},
    ArgumentField{"warmup_steps", &A::warmup_steps, kTrain,
                  "Linear warmup over warmup_steps (a ratio of the total steps when below 1); "
                  "overrides warmup_ratio."},

    ArgumentField{"logging_dir", &A::logging_dir, kLog,
                  "TensorBoard log dir (default: output_dir/runs/<date>_<host>)."},
    ArgumentField{"logging_strategy", &A::logging_strategy, kLog,
                  "The logging strategy to use."},
    ArgumentField{"logging_steps", &A::logging_steps, kLog,
                  "Log every X updates steps (a ratio of the total steps when below 1)."},
    ArgumentField{"logging_first_step", &A::logging_first_step, kLog,
                  "Log the first global_step."},
    ArgumentField{"eval_strategy", &A::eval_strategy, kLog, "The evaluation strategy to use."},
    ArgumentField{"eval_on_start", &A::eval_on_start, kLog,
                  "Whether to run through the entire evaluation step at the very beginning of "
                  "training as a sanity check."},
    ArgumentField{"eval_steps", &A::eval_steps, kLog,
                  "Run an evaluation every X steps (a ratio of the total steps when below 1; "
                  "default: logging_steps)."},
    ArgumentField{"save_strategy", &A::save_strategy, kLog,
                  "The checkpoint save strategy to use."},
    ArgumentField{"save_steps", &A::save_steps, kLog,
                  "Save checkpoint every X updates steps (a ratio of the total steps when below "
                  "1)."},
    ArgumentField{"save_total_limit", &A::save_total_limit, kLog,
                  "Keep at most this many checkpoints in output_dir (the best one is kept)."},
    ArgumentField{"load_best_model_at_end", &A::load_best_model_at_end, kLog,
                  "Whether or not to load the best model found during training at the end of "
                  "training."},
    ArgumentField{"metric_for_best_model", &A::metric_for_best_model, kLog,
                  "The metric to use to compare two different models (default: loss with "
                  "load_best_model_at_end)."},
    ArgumentField{"greater_is_better", &A::greater_is_better, kLog,
                  "Whether the metric_for_best_model should be maximized or not (default: false "
                  "for a loss)."},
    ArgumentField{"early_stopping_patience", &A::early_stopping_patience, kLog,
                  "Stop after this many evaluations without improvement (needs "
                  "load_best_model_at_end)."},
    ArgumentField{"early_stopping_threshold", &A::early_stopping_threshold, kLog,
                  "How much the metric must improve to count as an improvement."},
    ArgumentField{"report_to", &A::report_to, kLog,
                  "The list of integrations to report the results and logs to: none, jsonl, "
                  "tensorboard or all.",
                  kReporters},
    ArgumentField{"include_num_input_tokens_seen", &A::include_num_input_tokens_seen, kLog,
                  "Whether to track the number of input tokens seen (over all processes and "
                  "devices): all (padding included), non_padding or no; true and false mean all "
                  "and no (a bare flag: true). Logged as num_input_tokens_seen.",
                  kTokenCounts, /*bare_flag_means_true=*/true},
    ArgumentField{"disable_tqdm", &A::disable_tqdm, kLog, "Whether or not to disable the progress bar."},
    ArgumentField{"debug", &A::debug, kLog,
                  "Space-separated debug options (default: none): metrics prints the runtime's "
                  "counters (compiles, cache hits, times, bytes) at every logging step."},

    ArgumentField{"seed", &A::seed, kRun, "Random seed that will be set at the beginning of training."},
    ArgumentField{"data_seed", &A::data_seed, kRun,
                  "Random seed to be used with data samplers (default: seed)."},
    ArgumentField{"train_sampling_strategy", &A::train_sampling_strategy, kRun,
                  "Order of the training examples: random (reshuffled each epoch) or "
                  "sequential (file order).",
                  kSamplingStrategies},
    ArgumentField{"bf16", &A::bf16, kRun, "Whether to use bf16 (mixed) precision."},
    ArgumentField{"gradient_checkpointing", &A::gradient_checkpointing, kRun,
                  "If True, use gradient checkpointing to save memory at the expense of slower "
                  "backward pass."},
    ArgumentField{"device", &A::device, kRun,
                  "The device to run on: auto (a TPU or GPU through a PJRT plugin when one is "
                  "found, else the CPU), cpu, reference, pjrt:cpu, pjrt:cuda, pjrt:tpu or tpu.",
                  kDevices},
    ArgumentField{"pjrt_plugin", &A::pjrt_plugin, kRun,
                  "The PJRT plugin library for --device pjrt:* (default: the plugins `kiln "
                  "devices` lists)."},
    ArgumentField{"num_devices", &A::num_devices, kRun,
                  "How many of the device's cores or chips to train on, one replica each (0: "
                  "all; with the XLA CPU plugin, also how many CPU devices it makes)."},
    ArgumentField{"ddp_backend", &A::ddp_backend, kRun,
                  "The backend of distributed training across processes started by mpirun: mpi "
                  "(the default there; nccl comes with the CUDA backend)."},
    ArgumentField{"ddp_timeout", &A::ddp_timeout, kRun,
                  "Seconds a process of a distributed run waits for the others at a collective "
                  "before the run ends with an error (a process died or hangs)."},
    ArgumentField{"compile_cache_dir", &A::compile_cache_dir, kRun,
                  "A folder that keeps the programs compiled for XLA devices, so that a repeated "
                  "or resumed run loads them instead of compiling again (default: "
                  "$XDG_CACHE_HOME/kiln/compile or ~/.cache/kiln/compile; '' or none: off)."},
    ArgumentField{"disable_passes", &A::disable_passes, kRun,
                  "Compiler passes to turn off, comma-separated, for debugging: dce, cse, fold, "
                  "simplify, fusion, inplace (default: none)."},
    ArgumentField{"dataloader_drop_last", &A::dataloader_drop_last, kRun,
                  "Drop the last incomplete batch if it is not divisible by the batch size."},
};

constexpr std::array kRenamed = {RenamedArgument{"evaluation_strategy", "eval_strategy"}};

}  // namespace

std::span<const ArgumentField> training_argument_fields() { return kFields; }

const ArgumentField* find_training_argument_field(std::string_view name) {
  auto found = std::find_if(kFields.begin(), kFields.end(),
                            [&](const ArgumentField& field) { return field.name == name; });
  return found == kFields.end() ? nullptr : &*found;
}

std::string RenamedArgument::warning() const {
  return "warning: `" + std::string(old_name) +
         "` is deprecated and will be removed in version 4.46 of Transformers. Use `" +
         std::string(name) + "` instead";
}

std::span<const RenamedArgument> renamed_training_arguments() { return kRenamed; }

const RenamedArgument* find_renamed_training_argument(std::string_view old_name) {
  auto found = std::find_if(kRenamed.begin(), kRenamed.end(),
                            [&](const RenamedArgument& renamed) { return renamed.old_name == old_name; });
  return found == kRenamed.end() ? nullptr : &*found;
}

}  // namespace kiln
