// TrainingArguments post-init (HF's __post_init__ checks, with the flag named in each error) and
// the step counts of a run.
#include "kiln/train/training_arguments.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <utility>

#include "kiln/compiler/options.h"
#include "kiln/ir/error.h"
#include "kiln/train/lr_schedule.h"
#include "kiln/train/training_arguments_fields.h"

namespace kiln {
namespace {

// os.path.expanduser for "~" and "~/...".
std::string expand_user(const std::string& path) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || path.empty() || path[0] != '~') return path;
  if (path.size() == 1 || path[1] == '/') return home + path.substr(1);
  return path;
}

// HF's default_logdir(): runs/<Mon>DD_HH-MM-SS_<hostname>.
std::string default_logdir() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char date[32];
  std::strftime(date, sizeof date, "%b%d_%H-%M-%S", &local);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return (std::filesystem::path("runs") / (std::string(date) + "_" + host)).string();
}

// Step counts may be ratios (< 1) or whole numbers; HF rejects 2.5 and so do we.
void check_steps(double& steps, std::string_view flag) {
  check(steps >= 0, flag, "must not be negative: ", steps);
  if (steps > 1) {
    check(steps == std::floor(steps), flag, "must be an integer if bigger than 1: ", steps);
  }
}

void check_interval_steps(bool by_steps, double steps, std::string_view flag,
                          std::string_view strategy_flag) {
  check(!by_steps || steps > 0, flag, "must be positive with ", strategy_flag, " steps");
}

void check_load_best(const TrainingArguments& args) {
  if (!args.load_best_model_at_end || args.save_strategy == SaveStrategy::best) return;
  const std::string_view flag = "--load_best_model_at_end";
  if (interval_strategy_name(args.eval_strategy) != save_strategy_name(args.save_strategy)) {
    fail(flag, "requires the save and eval strategy to match, except when "
               "--save_strategy=\"best\", but found\n- Evaluation strategy: ",
         interval_strategy_name(args.eval_strategy),
         "\n- Save strategy: ", save_strategy_name(args.save_strategy));
  }
  if (args.eval_strategy != IntervalStrategy::steps) return;
  double save = args.save_steps, eval = *args.eval_steps;
  if (std::fmod(save, eval) == 0) return;
  if (eval >= 1 && save >= 1) {
    fail(flag, "requires the saving steps to be a round multiple of the evaluation steps, but "
               "found ", save, ", which is not a round multiple of ", eval, ".");
  }
  if (!(eval < 1 && save < 1)) {
    fail(flag, "requires the saving steps to be a multiple of the evaluation steps, which cannot "
               "get guaranteed when mixing ratio and absolute steps for save_steps ", save,
         " and eval_steps ", eval, ".");
  }
  // Ratios: compared at a fixed resolution, as HF does, to sidestep 0.3 % 0.1 != 0.
  auto scaled = [](double ratio) { return std::llround(ratio * 1'000'000); };
  if (scaled(save) % scaled(eval) != 0) {
    fail(flag, "requires the saving steps to be a multiple of the evaluation steps, but found ",
         save, ", which is not a multiple of ", eval, ".");
  }
}

// report_to: "all" -> every reporter Kiln has, "none" -> no reporter.
void normalize_report_to(std::vector<std::string>& report_to) {
  const std::vector<std::string> all = {"jsonl", "tensorboard"};
  std::vector<std::string> out;
  for (const std::string& name : report_to) {
    if (name == "all") {
      out.insert(out.end(), all.begin(), all.end());
    } else if (name == "none") {
      check(report_to.size() == 1, "--report_to", "'none' cannot be combined with other values");
    } else {
      check(std::find(all.begin(), all.end(), name) != all.end(), "--report_to", "'", name,
            "' is not one of: none, jsonl, tensorboard, all");
      out.push_back(name);
    }
  }
  std::vector<std::string> unique;
  for (const std::string& name : out) {
    if (std::find(unique.begin(), unique.end(), name) == unique.end()) unique.push_back(name);
  }
  report_to = std::move(unique);
}

// debug: HF splits a string at spaces ("metrics other"); every word must be an option Kiln has.
void normalize_debug(std::vector<std::string>& debug) {
  const std::vector<std::string> known = {"metrics"};
  std::vector<std::string> words;
  for (const std::string& item : debug) {
    std::istringstream split(item);
    for (std::string word; split >> word;) {
      check(std::find(known.begin(), known.end(), word) != known.end(), "--debug", "'", word,
            "' is not a debug option; the options are: metrics");
      if (std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
    }
  }
  debug = std::move(words);
}

// Checks that HF leaves to torch.optim.AdamW or to the data code, made here to fail before a run.
void check_ranges(const TrainingArguments& args) {
  check(args.per_device_train_batch_size >= 1, "--per_device_train_batch_size",
        "must be positive: ", args.per_device_train_batch_size);
  check(args.per_device_eval_batch_size >= 1, "--per_device_eval_batch_size",
        "must be positive: ", args.per_device_eval_batch_size);
  check(args.gradient_accumulation_steps >= 1, "--gradient_accumulation_steps",
        "must be positive: ", args.gradient_accumulation_steps);
  const int64_t max_seq_length = max_seq_length_for(args);
  check(max_seq_length >= 1, "--max_seq_length", "must be positive: ", max_seq_length);
  check(!args.task_name || args.task.value_or("classification") == "classification",
        "--task_name", "GLUE metrics apply to --task classification, not ", *args.task);
  check(args.validation_split_percentage >= 0 && args.validation_split_percentage < 100,
        "--validation_split_percentage", "must lie in [0, 100): ",
        args.validation_split_percentage);
  for (auto [flag, value] : {std::pair{"--max_train_samples", args.max_train_samples},
                             std::pair{"--max_eval_samples", args.max_eval_samples},
                             std::pair{"--max_predict_samples", args.max_predict_samples},
                             std::pair{"--block_size", args.block_size}}) {
    check(!value || *value >= 1, flag, "must be positive: ", value.value_or(0));
  }
  check(args.doc_stride >= 0 && (args.task != "qa" || args.doc_stride < max_seq_length),
        "--doc_stride", "must lie in [0, max_seq_length): ", args.doc_stride);
  check(args.n_best_size >= 1, "--n_best_size", "must be positive: ", args.n_best_size);
  check(args.max_answer_length >= 1, "--max_answer_length", "must be positive: ",
        args.max_answer_length);
  check(args.mlm_probability >= 0 && args.mlm_probability <= 1, "--mlm_probability",
        "must lie in [0, 1]: ", args.mlm_probability);
  check(args.learning_rate >= 0, "--learning_rate", "Invalid learning rate: ", args.learning_rate);
  check(args.adam_epsilon >= 0, "--adam_epsilon", "Invalid epsilon value: ", args.adam_epsilon);
  check(args.adam_beta1 >= 0 && args.adam_beta1 < 1, "--adam_beta1",
        "Invalid beta parameter at index 0: ", args.adam_beta1);
  check(args.adam_beta2 >= 0 && args.adam_beta2 < 1, "--adam_beta2",
        "Invalid beta parameter at index 1: ", args.adam_beta2);
  check(args.weight_decay >= 0, "--weight_decay", "Invalid weight_decay value: ",
        args.weight_decay);
  check(args.max_grad_norm >= 0, "--max_grad_norm", "must not be negative: ", args.max_grad_norm);
  check(args.label_smoothing_factor >= 0 && args.label_smoothing_factor < 1,
        "--label_smoothing_factor", "must be in [0, 1): ", args.label_smoothing_factor);
  check(args.num_train_epochs >= 0, "--num_train_epochs", "must not be negative: ",
        args.num_train_epochs);
  check(args.warmup_ratio >= 0 && args.warmup_ratio <= 1, "--warmup_ratio",
        "warmup_ratio must lie in range [0,1]");
  check(args.warmup_steps >= 0, "--warmup_steps", "must not be negative: ", args.warmup_steps);
  CompileOptions().disable(args.disable_passes, "--disable_passes");
  check(args.warmup_steps <= 1 || args.warmup_steps == std::floor(args.warmup_steps),
        "--warmup_steps", "must be an integer if bigger than 1: ", args.warmup_steps);
}

// EarlyStoppingCallback.on_train_begin's requirements, checked before training starts.
void check_early_stopping(const TrainingArguments& args) {
  if (!args.early_stopping_patience) return;
  const std::string_view flag = "--early_stopping_patience";
  check(*args.early_stopping_patience >= 1, flag, "must be positive: ",
        *args.early_stopping_patience);
  check(args.load_best_model_at_end, flag,
        "EarlyStoppingCallback requires load_best_model_at_end = True");
  check(args.eval_strategy != IntervalStrategy::no, flag,
        "EarlyStoppingCallback requires IntervalStrategy of steps or epoch");
  check(args.early_stopping_threshold >= 0, "--early_stopping_threshold",
        "must not be negative: ", args.early_stopping_threshold);
}

}  // namespace

void training_arguments_post_init(TrainingArguments& args) {
  if (args.output_dir.empty()) args.output_dir = "trainer_output";
  args.output_dir = expand_user(args.output_dir);
  if (args.logging_dir.empty()) {
    args.logging_dir = (std::filesystem::path(args.output_dir) / default_logdir()).string();
  }
  args.logging_dir = expand_user(args.logging_dir);

  if (args.eval_strategy != IntervalStrategy::no) args.do_eval = true;
  if (args.eval_strategy == IntervalStrategy::steps && (!args.eval_steps || *args.eval_steps == 0)) {
    check(args.logging_steps > 0, "--eval_steps",
          "evaluation strategy steps requires either non-zero --eval_steps or --logging_steps");
    args.eval_steps = args.logging_steps;
  }
  check(args.logging_strategy != IntervalStrategy::steps || args.logging_steps != 0,
        "--logging_steps", "logging strategy steps requires non-zero --logging_steps");
  check_steps(args.logging_steps, "--logging_steps");
  check(args.num_devices >= 0, "--num_devices", "must be 0 (all devices) or more, got ",
        args.num_devices);
  check(!args.ddp_backend || *args.ddp_backend == "mpi", "--ddp_backend", "'",
        args.ddp_backend.value_or(""),
        "' is not available: Kiln runs processes over mpi (nccl comes with the CUDA backend)");
  check(args.ddp_timeout > 0, "--ddp_timeout", "must be positive, got ", args.ddp_timeout);
  check_steps(args.save_steps, "--save_steps");
  if (args.eval_steps) check_steps(*args.eval_steps, "--eval_steps");
  check_interval_steps(args.save_strategy == SaveStrategy::steps, args.save_steps, "--save_steps",
                       "--save_strategy");
  check_load_best(args);

  if (args.lr_scheduler_type == LrSchedulerType::reduce_lr_on_plateau) {
    check(args.eval_strategy != IntervalStrategy::no, "--lr_scheduler_type",
          "lr_scheduler_type reduce_lr_on_plateau requires an eval strategy");
  }
  if ((args.load_best_model_at_end || args.lr_scheduler_type == LrSchedulerType::reduce_lr_on_plateau) &&
      !args.metric_for_best_model) {
    args.metric_for_best_model = "loss";
  }
  // The scheduler's kwargs are checked here (no check depends on the run's length), so that a
  // bad key is a usage error before anything loads.
  lr_schedule_make(args.lr_scheduler_type, args.learning_rate, 0, 1, args.lr_scheduler_kwargs);
  if (args.save_strategy == SaveStrategy::best) {
    check(args.metric_for_best_model.has_value(), "--save_strategy",
          "`args.metric_for_best_model` must be provided when using 'best' save_strategy or if "
          "`args.load_best_model_at_end` is set to `True`.");
    // HF accepts it and never saves; say so instead.
    check(args.eval_strategy != IntervalStrategy::no, "--save_strategy",
          "best saves after evaluations that improve metric_for_best_model, and "
          "--eval_strategy is no");
  }
  if (!args.greater_is_better && args.metric_for_best_model) {
    args.greater_is_better = !args.metric_for_best_model->ends_with("loss");
  }
  if (std::optional<bool> on = parse_bool_word(args.include_num_input_tokens_seen)) {
    args.include_num_input_tokens_seen = *on ? "all" : "no";
  }
  for (const ArgumentField& field : training_argument_fields()) argument_check_choices(args, field);
  args.max_seq_length = max_seq_length_for(args);  // saved in training_args.json as run
  normalize_report_to(args.report_to);
  normalize_debug(args.debug);
  check_ranges(args);
  make_optimizer(optimizer_config(args));  // --optim_args errors before a run
  check_early_stopping(args);
}

int64_t max_seq_length_for(const TrainingArguments& args) {
  return args.max_seq_length.value_or(args.task == "qa" ? 384 : 128);
}

OptimizerConfig optimizer_config(const TrainingArguments& args) {
  return {args.optim, args.weight_decay, args.adam_beta1, args.adam_beta2, args.adam_epsilon,
          parse_optim_args(args.optim_args)};
}

int64_t warmup_steps_for(const TrainingArguments& args, int64_t num_training_steps) {
  if (args.warmup_steps >= 1) return static_cast<int64_t>(args.warmup_steps);
  double ratio = args.warmup_steps > 0 ? args.warmup_steps : args.warmup_ratio;
  return static_cast<int64_t>(std::ceil(static_cast<double>(num_training_steps) * ratio));
}

TrainingPlan training_plan(const TrainingArguments& args, int64_t batches_per_epoch) {
  check(batches_per_epoch >= 1, "--per_device_train_batch_size",
        "the training set gives no batch of this size (", batches_per_epoch, " batches)");
  const int64_t accumulation = args.gradient_accumulation_steps;
  TrainingPlan plan;
  plan.update_steps_per_epoch =
      std::max<int64_t>(batches_per_epoch / accumulation + (batches_per_epoch % accumulation > 0), 1);
  if (args.max_steps > 0) {
    plan.max_steps = args.max_steps;
    plan.num_train_epochs = plan.max_steps / plan.update_steps_per_epoch +
                            (plan.max_steps % plan.update_steps_per_epoch > 0);
  } else {
    plan.max_steps = static_cast<int64_t>(
        std::ceil(args.num_train_epochs * static_cast<double>(plan.update_steps_per_epoch)));
    plan.num_train_epochs = static_cast<int64_t>(std::ceil(args.num_train_epochs));
  }
  // TrainerState.compute_steps: ratios become ceil(max_steps * ratio).
  auto resolve = [&](double steps) {
    return static_cast<int64_t>(steps < 1 ? std::ceil(static_cast<double>(plan.max_steps) * steps)
                                          : steps);
  };
  plan.logging_steps = resolve(args.logging_steps);
  plan.eval_steps = args.eval_strategy == IntervalStrategy::steps ? resolve(*args.eval_steps) : 0;
  plan.save_steps = resolve(args.save_steps);
  plan.warmup_steps = warmup_steps_for(args, plan.max_steps);
  return plan;
}

}  // namespace kiln
