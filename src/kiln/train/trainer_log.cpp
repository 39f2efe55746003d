// The Trainer's logging (log_history, JSONL, TensorBoard, console) and HF's
// _maybe_log_save_evaluate: what happens after an update once the callbacks have decided.
#include <algorithm>
#include <filesystem>

#include "kiln/dist/communicator.h"
#include "kiln/train/distributed.h"
#include "kiln/train/log_jsonl.h"
#include "kiln/train/log_progress.h"
#include "kiln/train/log_python_json.h"
#include "kiln/train/tensorboard_writer.h"
#include "kiln/train/trainer.h"

namespace kiln {

// Only the main process of a distributed run speaks and writes logs (HF's
// is_world_process_zero); every process keeps the log history, which decisions read.
void Trainer::note(const std::string& line) {
  if (!dist::is_main_process()) return;
  if (progress_) {
    progress_->message(line);
  } else {
    log_ << line << '\n' << std::flush;
  }
}

void Trainer::log(nlohmann::json logs) {
  if (state_.epoch) logs["epoch"] = *state_.epoch;
  if (args_.include_num_input_tokens_seen != "no") {
    logs["num_input_tokens_seen"] = state_.num_input_tokens_seen;
  }
  nlohmann::json entry = log_history_entry(logs, state_.epoch, state_.global_step);
  state_.log_history.push_back(entry);
  for (const auto& callback : callbacks_) callback->on_log(args_, state_, logs);
  if (!dist::is_main_process()) return;
  const auto& report_to = args_.report_to;
  auto reports = [&](const char* name) {
    return std::find(report_to.begin(), report_to.end(), name) != report_to.end();
  };
  // Opened here for runs that only evaluate; train() opens the JSONL log itself.
  if (reports("jsonl") && !jsonl_) {
    std::filesystem::create_directories(args_.output_dir);
    jsonl_ = std::make_unique<JsonlLogWriter>(
        (std::filesystem::path(args_.output_dir) / "trainer_log.jsonl").string(), true);
  }
  if (jsonl_) jsonl_->write(entry);
  if (reports("tensorboard")) {
    if (!tensorboard_) tensorboard_ = std::make_unique<TensorBoardWriter>(args_.logging_dir);
    tensorboard_->log(logs, state_.global_step);
  }
  note(python_json_dumps(logs));
}

void Trainer::maybe_log_save_evaluate() {
  if (control_.should_log && state_.global_step > last_logged_step_) {
    const auto steps = static_cast<double>(state_.global_step - last_logged_step_);
    nlohmann::json logs;
    logs["loss"] = loss_since_log_ / steps;  // transformers 5 no longer rounds it
    if (args_.max_grad_norm > 0) logs["grad_norm"] = last_grad_norm_;
    // The rate the last step used, as transformers 5 logs it (4.x logged the next step's).
    logs["learning_rate"] = schedule_->lr(state_.global_step - 1);
    total_loss_ += loss_since_log_;
    loss_since_log_ = 0.0;
    last_logged_step_ = state_.global_step;
    log(logs);
    // Kept out of the logs themselves, which match HF's.
    if (std::find(args_.debug.begin(), args_.debug.end(), "metrics") != args_.debug.end()) {
      note("runtime metrics: " + format_counters(runtime_.counters()) +
           all_reduce_summary(dist::world(), state_.global_step));
    }
  }
  control_.should_log = false;
  if (control_.should_evaluate) {
    control_.should_evaluate = false;
    const nlohmann::json metrics = evaluate(*eval_data_, "eval");
    // save_strategy best: an evaluation that finds a new best saves (HF's _maybe_log_save_evaluate;
    // a save already due, as a stop signal's, stands).
    if (determine_best_metric(metrics) && args_.save_strategy == SaveStrategy::best) {
      control_.should_save = true;
    }
    // ReduceLROnPlateau steps with the metric, after the evaluation (Trainer._evaluate).
    if (schedule_->plateau) schedule_->plateau->step(metric_value(metrics, metric_to_check(args_)));
    if (progress_) progress_->exclude_interval();
  }
  if (control_.should_save) {
    control_.should_save = false;
    save_checkpoint();
    if (progress_) progress_->exclude_interval();
  }
}

}  // namespace kiln
