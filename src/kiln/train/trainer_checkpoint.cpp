// The Trainer's checkpoints: saving as HF's _save_checkpoint (best model tracking, rotation),
// resuming a run exactly where it stopped, loading the best model at the end.
#include <filesystem>

#include "kiln/dist/communicator.h"
#include "kiln/io/safetensors.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"
#include "kiln/train/checkpoint.h"
#include "kiln/train/trainer.h"

namespace kiln {

namespace fs = std::filesystem;

void Trainer::save_model(const std::string& folder) const {
  // A shape-independent ParameterSet holding the current weights, for save_pretrained.
  Graph graph;
  ParameterSet params = family_.parameters(head_, graph, *config_);
  params.load(train_state_.params(), "trainer");
  family_.save_pretrained(folder, *config_, params);
  tokenizer_save(tokenizer_, folder);
  training_arguments_write_json((fs::path(folder) / kTrainingArgsName).string(), args_);
}

bool Trainer::determine_best_metric(const nlohmann::json& metrics) {
  if (!args_.metric_for_best_model) return false;
  double value = metric_value(metrics, metric_to_check(args_));
  bool greater = args_.greater_is_better.value_or(false);
  if (!state_.best_metric ||
      (greater ? value > *state_.best_metric : value < *state_.best_metric)) {
    state_.best_metric = value;
    state_.best_global_step = state_.global_step;
    return true;
  }
  return false;
}

void Trainer::save_checkpoint() {
  const int64_t step = state_.global_step;
  if (step == last_saved_step_) return;  // the end of training and of an epoch may coincide
  last_saved_step_ = step;
  const fs::path output_dir = args_.output_dir;
  if (args_.metric_for_best_model && state_.best_global_step) {
    fs::path best = checkpoint_path(output_dir, *state_.best_global_step);
    if (*state_.best_global_step == step || is_complete_checkpoint(best)) {
      state_.best_model_checkpoint = best.string();
    }
  }
  state_.stateful_callbacks = {{"TrainerControl", control_.to_state()}};
  for (const auto& callback : callbacks_) {
    nlohmann::json saved = callback->to_state();
    if (!saved.is_null()) state_.stateful_callbacks[callback->name()] = saved;
  }
  // The main process writes the checkpoint (every process holds the same state); the others
  // wait for it, so that none runs ahead of a checkpoint it may have to resume from.
  if (!dist::is_main_process()) {
    dist::world().barrier();
    return;
  }
  fs::path folder = write_checkpoint(
      output_dir, step,
      [&](const fs::path& tmp) {
        save_model(tmp.string());
        optimizer_state_write((tmp / kOptimizerName).string(), train_state_.optimizer());
        lr_schedule_write_state((tmp / kSchedulerName).string(), {*schedule_, step});
        rng_state_write((tmp / kRngStateName).string(), position_);
      },
      trainer_state_to_json(state_));
  note("Saved checkpoint " + folder.string());
  std::optional<fs::path> best;
  if (state_.best_model_checkpoint) best = fs::path(*state_.best_model_checkpoint);
  for (const fs::path& deleted : rotate_checkpoints(output_dir, args_.save_total_limit, best)) {
    note("Deleting older checkpoint " + deleted.string() + " due to save_total_limit");
  }
  dist::world().barrier();
}

void Trainer::load_weights(const std::string& file) {
  SafetensorsFile weights(file);
  TensorMap loaded;
  for (const auto& [name, current] : train_state_.param_buffers()) {
    check(weights.contains(name), file, "no tensor '", name, "' for the model");
    loaded.emplace(name, weights.to_tensor(name, current[0]->shape()));
  }
  check(weights.names().size() == loaded.size(), file, "holds ", weights.names().size(),
        " tensors, the model has ", loaded.size(), " parameters");
  train_state_.load_params(loaded);
}

RngState Trainer::resume_from(const fs::path& folder) {
  const std::string where = folder.string();
  TrainerState saved = trainer_state_load((folder / kTrainerStateName).string());
  if (saved.train_batch_size && *saved.train_batch_size != state_.train_batch_size) {
    note("warning: the checkpoint was trained with batch size " +
         std::to_string(*saved.train_batch_size) + ", this run uses " +
         std::to_string(*state_.train_batch_size) + "; the data order will differ");
  }
  load_weights((folder / "model.safetensors").string());
  OptimizerState optimizer = optimizer_state_read((folder / kOptimizerName).string());
  const OptimizerConfig optim = optimizer_config(args_);
  optimizer_state_check(optimizer, train_state_.params(), optimizer_kind(optim.name),
                        *make_optimizer(optim), where);
  // Fewer updates than steps when --nan_inf_strategy skip left some out; never more.
  check(optimizer.step <= saved.global_step, where, "the optimizer has done ", optimizer.step,
        " updates but trainer_state.json says global_step ", saved.global_step);
  train_state_.load_optimizer(optimizer);
  LrScheduleState scheduler = lr_schedule_read_state((folder / kSchedulerName).string());
  check(scheduler.last_epoch == saved.global_step, where, "scheduler.json is at step ",
        scheduler.last_epoch, ", trainer_state.json at ", saved.global_step);
  schedule_->plateau = scheduler.schedule.plateau;
  RngState position = rng_state_read((folder / kRngStateName).string());

  state_.global_step = saved.global_step;
  state_.epoch = saved.epoch;
  state_.log_history = std::move(saved.log_history);
  state_.best_metric = saved.best_metric;
  state_.best_global_step = saved.best_global_step;
  state_.best_model_checkpoint = saved.best_model_checkpoint;
  state_.total_flos = saved.total_flos;
  state_.num_input_tokens_seen = saved.num_input_tokens_seen;
  // Kiln restores the callbacks' state (HF's restore_callback_states_from_checkpoint), so early
  // stopping counts on where it was.
  for (const auto& callback : callbacks_) {
    if (saved.stateful_callbacks.contains(callback->name())) {
      callback->restore(saved.stateful_callbacks[callback->name()]);
    }
  }
  note("Continuing training from checkpoint " + where + ": global step " +
       std::to_string(state_.global_step) + ", epoch " + std::to_string(position.epoch) + ", " +
       std::to_string(position.sampler_position) + " examples of that epoch done");
  return position;
}

void Trainer::load_best_model() {
  const std::string& folder = *state_.best_model_checkpoint;
  note("Loading best model from " + folder +
       " (score: " + std::to_string(state_.best_metric.value_or(0.0)) + ").");
  load_weights((fs::path(folder) / "model.safetensors").string());
}

}  // namespace kiln
