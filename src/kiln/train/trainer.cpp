// The Trainer's training loop: HF's step counts, a deterministic order per epoch, gradient
// accumulation windows, dropout keyed by the micro-step, and the schedule's rate as an input.
#include "kiln/train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <future>
#include <cstring>
#include <iostream>
#include <numeric>
#include <sstream>

#include "kiln/dist/communicator.h"
#include "kiln/io/dataset_order.h"
#include "kiln/ir/error.h"
#include "kiln/runtime/heap_pages.h"
#include "kiln/train/checkpoint.h"
#include "kiln/train/classification_data.h"
#include "kiln/train/distributed.h"
#include "kiln/train/dropout_keys.h"
#include "kiln/train/log_jsonl.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/log_progress.h"
#include "kiln/train/step_memory.h"
#include "kiln/train/stop_signal.h"
#include "kiln/train/tensorboard_writer.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// --num_devices, or every device of the backend.
int replica_count(const TrainingArguments& args, const Backend& backend) {
  check(args.num_devices <= backend.devices(), "--num_devices", args.num_devices,
        " devices asked for; the ", backend.name(), " backend has ", backend.devices());
  return args.num_devices > 0 ? static_cast<int>(args.num_devices) : backend.devices();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int64_t real_tokens(const Tensor& attention_mask) {
  int64_t count = 0;
  for (int64_t i = 0; i < attention_mask.numel(); ++i) count += attention_mask.get(i) != 0.0;
  return count;
}

}  // namespace

TrainStepConfig step_config(const TrainingArguments& args, int replicas) {
  TrainStepConfig config;
  config.replicas = replicas;
  config.processes = dist::world().size();
  config.stop_on_nonfinite = args.nan_inf_strategy == "stop";
  config.optimizer = optimizer_config(args);
  config.max_grad_norm = args.max_grad_norm;
  config.accumulate = args.gradient_accumulation_steps > 1;
  config.compile.bf16 = args.bf16;
  config.compile.gradient_checkpointing = args.gradient_checkpointing;
  config.compile.disable(args.disable_passes, "--disable_passes");
  return config;
}

Trainer::Trainer(TrainingArguments args, const PretrainedConfig& config, TensorMap weights,
                 Tokenizer tokenizer, Backend& backend, std::ostream& log)
    : args_(std::move(args)),
      config_(config.clone()),
      family_(model_family(config)),
      head_(config_head(config, "config")),
      tokenizer_(std::move(tokenizer)),
      log_(log),
      runtime_(backend, [this](const std::string& line) { note(line); },
               compile_cache_folder(args_.compile_cache_dir)),
      train_state_(runtime_, std::move(weights), replica_count(args_, backend),
                   optimizer_config(args_)),
      programs_(head_, *config_, step_config(args_, train_state_.replicas()), runtime_,
                args_.mlm_probability, args_.label_smoothing_factor) {
  dist::Communicator& world = dist::world();
  check(world.size() == 1 || backend.name() == "cpu", "--device", "a run of ", world.size(),
        " processes trains on the cpu backend (the ", backend.name(),
        " backend has no collectives across processes yet)");
  world.set_timeout(static_cast<double>(args_.ddp_timeout));
  check(max_seq_length_for(args_) <= family_.max_positions(*config_), "--max_seq_length",
        max_seq_length_for(args_), " is longer than the model's max_position_embeddings ",
        family_.max_positions(*config_));
  config_->architectures = {family_.architecture(head_)};
  // HF's floating_point_ops counts the parameters outside the embeddings.
  for (const auto& [name, buffers] : train_state_.param_buffers()) {
    const int64_t count = shape_numel(buffers[0]->shape());
    parameters_ += count;
    if (name.find("embeddings.") == std::string::npos) non_embedding_params_ += count;
  }
  return_free_heap_pages();  // of the host weights, let go as they were uploaded
  if (args_.early_stopping_patience) {
    callbacks_.push_back(std::make_shared<EarlyStoppingCallback>(*args_.early_stopping_patience,
                                                                 args_.early_stopping_threshold));
  }
}

Trainer::~Trainer() = default;

void Trainer::add_callback(std::shared_ptr<TrainerCallback> callback) {
  callbacks_.push_back(std::move(callback));
}

CollateOptions Trainer::collate_options(int64_t batch_size) const {
  CollateOptions options;
  options.batch_size = static_cast<size_t>(batch_size);
  options.max_seq_length = static_cast<size_t>(max_seq_length_for(args_));
  options.pad_to_max_length = args_.pad_to_max_length;
  // GPT-2's tokenizer has none: collate_inputs refuses batches that need padding then, as
  // transformers does; clm's blocks need none (a short last batch's padding rows are ignored).
  options.pad_id = tokenizer_.has_pad_token() ? std::optional(tokenizer_.pad_id()) : std::nullopt;
  options.pad_type_id = tokenizer_.config().pad_type_id;
  return options;
}

TrainingPlan Trainer::start_run(const TaskData& train_data, const TaskData* eval_data,
                                const std::optional<fs::path>& resume) {
  check(train_data.has_labels(), train_data.source(), "training data needs labels");
  check(train_data.size() > 0, train_data.source(), "no training examples");
  const bool evaluates_during = args_.eval_strategy != IntervalStrategy::no;
  for (auto [flag, wanted] : {std::pair{"--eval_strategy", evaluates_during},
                              std::pair{"--eval_on_start", args_.eval_on_start}}) {
    check(!wanted || eval_data != nullptr, flag,
          "evaluating during training needs evaluation data (--validation_file, or "
          "--validation_split_percentage above 0)");
  }
  eval_data_ = eval_data;
  integer_labels_ = train_data.integer_labels();
  // What transformers' forward records on its first batch with labels, and then saves.
  if (head_ == ModelHead::sequence_classification && !config_->problem_type) {
    config_->problem_type = problem_type_for(*config_, integer_labels_);
  }
  // The global batch of one micro-step: a slice of per_device_train_batch_size rows per device
  // of every process.
  const int64_t batch_size = args_.per_device_train_batch_size * replicas() * dist::world().size();
  const auto examples = static_cast<int64_t>(train_data.size());
  batches_per_epoch_ =
      examples / batch_size + (!args_.dataloader_drop_last && examples % batch_size != 0);
  TrainingPlan plan = training_plan(args_, batches_per_epoch_);
  schedule_ = lr_schedule_for(args_, plan.max_steps);

  state_ = TrainerState{};
  state_.max_steps = plan.max_steps;
  state_.num_train_epochs = plan.num_train_epochs;
  state_.logging_steps = plan.logging_steps;
  state_.eval_steps = plan.eval_steps;
  state_.save_steps = plan.save_steps;
  state_.train_batch_size = batch_size;
  control_ = TrainerControl{};
  stopped_by_signal_ = 0;
  position_ = RngState{args_.seed, args_.data_seed.value_or(args_.seed), 0, 0, 0};
  if (resume) position_ = resume_from(*resume);
  loss_since_log_ = total_loss_ = 0.0;
  last_logged_step_ = state_.global_step;

  std::error_code error;
  fs::create_directories(args_.output_dir, error);
  check(!error, args_.output_dir, "cannot create the output folder: ", error.message());
  // Found now rather than at the first checkpoint, hours into the run.
  if (::access(args_.output_dir.c_str(), W_OK) != 0) {
    fail(args_.output_dir, "cannot write into the output folder: ", std::strerror(errno));
  }
  const auto& report_to = args_.report_to;
  if (std::find(report_to.begin(), report_to.end(), "jsonl") != report_to.end() &&
      dist::is_main_process()) {
    jsonl_ = std::make_unique<JsonlLogWriter>(
        (fs::path(args_.output_dir) / "trainer_log.jsonl").string(), resume.has_value());
  }
  note("***** Running training *****");
  note("  Num examples = " + std::to_string(examples) + ", num epochs = " +
       std::to_string(plan.num_train_epochs) + ", instantaneous batch size per device = " +
       std::to_string(args_.per_device_train_batch_size) + ", devices = " +
       std::to_string(replicas()) + " in each of " + std::to_string(dist::world().size()) +
       " processes");
  note("  Total train batch size (w. parallel, distributed & accumulation) = " +
       std::to_string(batch_size * args_.gradient_accumulation_steps) +
       ", gradient accumulation steps = " + std::to_string(args_.gradient_accumulation_steps));
  note("  Total optimization steps = " + std::to_string(plan.max_steps) +
       ", number of trainable parameters = " + std::to_string(parameters_));
  if (!args_.disable_tqdm && dist::is_main_process()) {
    progress_ = std::make_unique<ProgressBar>(plan.max_steps, state_.global_step,
                                              plan.logging_steps, log_, log_is_tty());
  }
  return plan;
}

nlohmann::json Trainer::train(const ClassificationDataset& train_data,
                              const ClassificationDataset* eval_data,
                              const std::optional<fs::path>& resume) {
  check(train_data.label_kind != LabelKind::none, train_data.source,
        "training data needs a label column");
  check_classification_labels(train_data, *config_, train_data.source);
  const auto max_length = static_cast<size_t>(max_seq_length_for(args_));
  const std::string glue_task = args_.task_name.value_or("");
  ClassificationData train_rows(train_data, tokenizer_, max_length, glue_task);
  std::optional<ClassificationData> eval_rows;
  if (eval_data) eval_rows.emplace(*eval_data, tokenizer_, max_length, glue_task);
  return train(train_rows, eval_rows ? &*eval_rows : nullptr, resume);
}

nlohmann::json Trainer::train(const TaskData& train_data, const TaskData* eval_data,
                              const std::optional<fs::path>& resume) {
  const auto start = std::chrono::steady_clock::now();
  const TrainingPlan plan = start_run(train_data, eval_data, resume);
  const int64_t first_step = state_.global_step;
  if (args_.eval_on_start) evaluate(*eval_data_, "eval");  // logged, as HF, at the current step
  for (int64_t epoch = position_.epoch;
       epoch < plan.num_train_epochs && state_.global_step < plan.max_steps; ++epoch) {
    run_epoch(train_data, epoch);
    flow_on_epoch_end(args_, control_);
    maybe_log_save_evaluate();
    if (control_.should_training_stop) break;
  }
  if (progress_) progress_->finish();
  progress_.reset();
  if (stopped_by_signal_ != 0) {
    const char* name = stopped_by_signal_ == SIGINT ? "SIGINT" : "SIGTERM";
    note(std::string("Training stopped by ") + name + " after step " +
         std::to_string(state_.global_step) + "; its checkpoint is saved.");
    return nlohmann::json::object();
  }
  note("Training completed.");
  if (args_.load_best_model_at_end && state_.best_model_checkpoint) load_best_model();

  // HF's train metrics; train_loss is the mean over this run's updates.
  total_loss_ += loss_since_log_;
  const int64_t steps_run = state_.global_step - first_step;
  const auto examples = static_cast<double>(train_data.size());
  const auto samples = static_cast<int64_t>(
      args_.max_steps > 0 ? static_cast<double>(plan.max_steps * state_.train_batch_size.value_or(0) *
                                                args_.gradient_accumulation_steps)
                          : examples * args_.num_train_epochs);
  nlohmann::json metrics = speed_metrics("train", seconds_since(start), samples, state_.max_steps);
  metrics["total_flos"] = state_.total_flos;
  metrics["train_loss"] = steps_run > 0 ? total_loss_ / static_cast<double>(steps_run) : 0.0;
  metrics["train_compiles"] = compiles();
  log(metrics);
  metrics["epoch"] = state_.epoch.value_or(0.0);
  note("runtime: " + format_counters(runtime_.counters()) +
       all_reduce_summary(dist::world(), steps_run));

  // HF: with save_total_limit 1, only the best checkpoint stays once training is over.
  if (args_.save_total_limit == 1 && state_.best_model_checkpoint && dist::is_main_process()) {
    for (const fs::path& checkpoint : list_checkpoints(args_.output_dir)) {
      if (!fs::equivalent(checkpoint, *state_.best_model_checkpoint)) fs::remove_all(checkpoint);
    }
  }
  return metrics;
}

// An update queued on the device, read back by read_back_updates().
struct Trainer::QueuedUpdate {
  int64_t step = 0;                        // the global step it makes
  std::vector<BufferPtr> micro_losses;     // the accumulation micro-batches' losses
  PendingStep last;                        // the last micro-batch: loss, norm, finite flag
  TrainStep* program = nullptr;            // for the diagnosis of a non-finite update
  ReplicaFeeds feeds;                      // the last micro-batch's, kept for the diagnosis
  double learning_rate = 0.0;
  double loss_scale = 1.0;
};

ReplicaFeeds Trainer::replica_feeds(const TaskData& data, const std::vector<size_t>& rows,
                                    const CollateOptions& collate, int64_t epoch,
                                    int64_t micro_step, int64_t seed) const {
  const Tensor dropout_seed = Tensor::scalar(DType::i64, static_cast<double>(seed));
  // This process's replicas are replicas [first, first + replicas) of all processes' `total`.
  const auto replicas = static_cast<size_t>(train_state_.replicas());
  const size_t total = replicas * static_cast<size_t>(dist::world().size());
  const size_t first = replicas * static_cast<size_t>(dist::world().rank());
  ReplicaFeeds feeds;
  if (total == 1) {
    feeds.push_back(data.collate(rows, collate, true, epoch));
  } else {
    // Every replica pads to the global batch's bucket, so that all run one program.
    CollateOptions slice = collate;
    slice.batch_size = collate.batch_size / total;
    slice.min_bucket = static_cast<size_t>(
        data.collate(rows, collate, true, epoch).at("input_ids").shape()[1]);
    for (size_t r = first; r < first + replicas; ++r) {
      std::vector<size_t> mine;
      for (size_t i = r; i < rows.size(); i += total) mine.push_back(rows[i]);
      feeds.push_back(data.collate(mine, slice, true, epoch));
    }
  }
  // Keyed by the global micro-step and each row's place in the global batch: a resumed run
  // redraws the same masks, and any number of replicas draws those of one device.
  for (size_t r = 0; r < replicas; ++r) {
    if (!family_.takes_token_type_ids()) feeds[r].erase("token_type_ids");
    feeds[r]["dropout_seed"] = dropout_seed;
    feeds[r]["dropout_offset"] =
        dropout_row_keys(micro_step, static_cast<int64_t>(collate.batch_size),
                         static_cast<int64_t>(first + r), feeds[r].at("input_ids").shape()[0],
                         static_cast<int64_t>(total));
  }
  return feeds;
}

void Trainer::run_epoch(const TaskData& data, int64_t epoch) {
  const auto batch_size = static_cast<size_t>(*state_.train_batch_size);
  const CollateOptions collate = collate_options(*state_.train_batch_size);
  std::vector<size_t> order = sampler_order(data.size(), position_.data_seed, epoch);
  if (args_.train_sampling_strategy == "sequential") std::iota(order.begin(), order.end(), 0);
  std::vector<std::vector<size_t>> batches =
      epoch_batches(order, batch_size, args_.dataloader_drop_last);
  // Resuming inside this epoch: the batches before the saved position are done.
  size_t next = 0;
  int64_t step_in_epoch = 0;
  if (epoch == position_.epoch) {
    next = static_cast<size_t>(position_.sampler_position) / batch_size;
    step_in_epoch = position_.step_in_epoch;
  }
  const auto accumulation = static_cast<size_t>(args_.gradient_accumulation_steps);
  // The next micro-batch's feeds are made on another thread while the device computes.
  auto prepare = [&](size_t index) {
    return std::async(std::launch::async, [this, &data, &batches, &collate, epoch, index,
                                           seed = position_.seed] {
      return replica_feeds(data, batches[index], collate, epoch,
                           epoch * batches_per_epoch_ + static_cast<int64_t>(index), seed);
    });
  };
  std::future<ReplicaFeeds> prepared;
  if (next < batches.size()) prepared = prepare(next);
  while (next < batches.size()) {
    // One optimizer update over up to `accumulation` micro-batches (the last window of an
    // epoch may be shorter; HF then divides by its real length).
    const size_t window = std::min(accumulation, batches.size() - next);
    const double scale = accumulation > 1 ? 1.0 / static_cast<double>(window) : 1.0;
    const double learning_rate = schedule_->lr(state_.global_step);
    int64_t tokens = 0;
    int64_t input_tokens = 0;  // as --include_num_input_tokens_seen counts them
    const int64_t compiles_before = compiles();
    QueuedUpdate update;
    update.step = state_.global_step + 1;
    update.learning_rate = learning_rate;
    update.loss_scale = scale;
    for (size_t micro = 0; micro < window; ++micro, ++next) {
      ReplicaFeeds feeds = prepared.get();
      if (next + 1 < batches.size()) prepared = prepare(next + 1);
      const Tensor& input_ids = feeds[0].at("input_ids");
      TrainStep& step =
          programs_.train_step(input_ids.shape(), collate.index_dtype, integer_labels_);
      if (!memory_planned_) {
        note(step_memory_line(step_memory(step, train_state_)));
        memory_planned_ = true;
      }
      if (micro + 1 < window) {
        update.micro_losses.push_back(step.accumulate(train_state_, feeds, scale));
      } else {
        update.last = step.update(train_state_, feeds, learning_rate, scale);
        update.program = &step;
      }
      // Every process's replicas have the shape of this one's.
      for (const TensorMap& replica : feeds) {
        const int64_t real = real_tokens(replica.at("attention_mask"));
        tokens += real;
        const bool padded = args_.include_num_input_tokens_seen == "all";
        input_tokens += padded ? replica.at("input_ids").numel() : real;
        state_.total_flos += 6.0 * dist::world().size() *
                             static_cast<double>(replica.at("input_ids").numel() *
                                                 non_embedding_params_);
      }
      if (micro + 1 == window) update.feeds = std::move(feeds);
    }
    queued_.push_back(std::move(update));
    if (args_.include_num_input_tokens_seen != "no") {
      // HF gathers every process's count at every step.
      if (dist::world().size() > 1) {
        dist::world().all_reduce_sum(&input_tokens, 1, DType::i64)->wait();
      }
      state_.num_input_tokens_seen += input_tokens;
    }
    ++state_.global_step;
    ++step_in_epoch;
    state_.epoch = static_cast<double>(epoch) +
                   static_cast<double>(next) / static_cast<double>(batches.size());
    position_.epoch = epoch;
    position_.step_in_epoch = step_in_epoch;
    position_.sampler_position = static_cast<int64_t>(std::min(next * batch_size, data.size()));
    if (next == batches.size()) position_ = {position_.seed, position_.data_seed, epoch + 1, 0, 0};

    flow_on_step_end(args_, state_, control_);
    // Every process stops after the same step when any of them got a signal.
    int signal_number = stop_signal();
    if (dist::world().any(signal_number != 0)) {
      // SIGINT or SIGTERM: this step is done; save it (after any evaluation due now) and stop.
      stopped_by_signal_ = signal_number != 0 ? signal_number : SIGTERM;
      control_.should_save = true;
      control_.should_training_stop = true;
    }
    // A device runs ahead of the host until the run needs the updates' numbers; host backends
    // computed them already.
    constexpr size_t kMaxQueued = 64;  // bounds how late a non-finite update is reported
    if (runtime_.backend().host_memory() || control_.should_log || control_.should_evaluate ||
        control_.should_save || control_.should_training_stop || next == batches.size() ||
        queued_.size() >= kMaxQueued) {
      read_back_updates();
    }
    if (progress_) {
      const auto since_log = static_cast<double>(state_.global_step - last_logged_step_);
      std::optional<double> loss;
      if (queued_.empty()) loss = loss_since_log_ / since_log;
      if (compiles() != compiles_before) progress_->exclude_interval();
      progress_->update(state_.global_step, tokens, loss, learning_rate);
    }
    maybe_log_save_evaluate();
    if (control_.should_training_stop || control_.should_epoch_stop) break;
  }
  read_back_updates();
  control_.should_epoch_stop = false;
}

void Trainer::read_back_updates() {
  for (QueuedUpdate& update : queued_) {
    double loss_sum = 0.0;
    for (const BufferPtr& loss : update.micro_losses) loss_sum += runtime_.to_host(*loss).get(0);
    StepResult result = update.last.result();
    loss_sum += result.loss;
    const size_t window = update.micro_losses.size() + 1;
    double step_loss = loss_sum / static_cast<double>(window);
    if (!result.nonfinite.empty()) {
      // At the state's current weights: those before this update on host backends (read at
      // once) and when stopping (no later update applied); with skip on a device that ran
      // ahead, those after the updates queued since.
      result.nonfinite = update.program->diagnose(train_state_, update.feeds,
                                                  update.learning_rate, update.loss_scale);
    }
    if (!result.nonfinite.empty() || !std::isfinite(step_loss)) {
      step_loss = handle_nonfinite(step_loss, result, update.step);
    }
    loss_since_log_ += step_loss;
    last_grad_norm_ = result.grad_norm;
    StepInfo info{step_loss, result.grad_norm, update.learning_rate};
    for (const auto& callback : callbacks_) callback->on_step_end(args_, state_, control_, info);
  }
  queued_.clear();
}

double Trainer::handle_nonfinite(double step_loss, const StepResult& result, int64_t step) {
  std::ostringstream what;
  what << "the loss is " << step_loss << " and the gradient norm " << result.grad_norm << "; ";
  if (result.nonfinite.empty()) {
    // The guard in the step program saw finite gradients: only an earlier micro-batch's loss
    // of this accumulation window was not finite, and the update was applied.
    what << "an earlier micro-batch's loss was not finite but the summed gradients were, so the "
            "update was applied";
  } else {
    what << "the first non-finite value is in " << result.nonfinite;
  }
  const char* weights = result.nonfinite.empty()
                            ? ". "
                            : ". The weights and optimizer state are those before this step. ";
  // Stopping: the run ends after the last good update (the ones queued after this one applied
  // nothing, see TrainStepConfig::stop_on_nonfinite).
  if (args_.nan_inf_strategy != "skip") state_.global_step = step - 1;
  check(args_.nan_inf_strategy == "skip", "step " + std::to_string(step), what.str(), weights,
        "Lower --learning_rate, check the data, or pass --nan_inf_strategy skip to skip such "
        "updates.");
  note("warning: [step " + std::to_string(step) + "] " + what.str() +
       (result.nonfinite.empty() ? "" : "; update skipped (--nan_inf_strategy skip)"));
  // As HF's logging_nan_inf_filter: the step counts with the mean loss since the last log.
  const auto since_log = static_cast<double>(step - 1 - last_logged_step_);
  return since_log > 0 ? loss_since_log_ / since_log : 0.0;
}

}  // namespace kiln
