// Trainer callbacks as transformers' trainer_callback.py has them: TrainerControl, the default
// flow (when to log, evaluate, save and stop) and EarlyStoppingCallback.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kiln/train/trainer_state.h"
#include "kiln/train/training_arguments.h"

namespace kiln {

// What the loop does next; callbacks set the flags, the loop clears them once acted on.
struct TrainerControl {
  bool should_training_stop = false;
  bool should_epoch_stop = false;
  bool should_save = false;
  bool should_evaluate = false;
  bool should_log = false;

  // HF's ExportableState form: {"args": {flags}, "attributes": {}}.
  nlohmann::json to_state() const;
  static TrainerControl from_state(const nlohmann::json& state);
};

// What one optimizer update reports to on_step_end.
struct StepInfo {
  double loss = 0.0;  // mean of the micro-batches' losses (unrounded)
  double grad_norm = 0.0;
  double learning_rate = 0.0;  // the rate this update used
};

class TrainerCallback {
 public:
  virtual ~TrainerCallback() = default;
  // HF's class name: the key of its state in trainer_state.json's stateful_callbacks.
  virtual std::string name() const = 0;
  virtual void on_step_end(const TrainingArguments&, const TrainerState&, TrainerControl&,
                           const StepInfo&) {}
  virtual void on_log(const TrainingArguments&, const TrainerState&, const nlohmann::json&) {}
  // Called by evaluation during training, before the best metric is updated (as HF).
  virtual void on_evaluate(const TrainingArguments&, const TrainerState&, TrainerControl&,
                           const nlohmann::json&) {}
  // Stateful callbacks return {"args": ..., "attributes": ...}; null means stateless.
  virtual nlohmann::json to_state() const { return nullptr; }
  virtual void restore(const nlohmann::json&) {}
};

// DefaultFlowCallback.on_step_end: the decisions after optimizer update state.global_step.
void flow_on_step_end(const TrainingArguments& args, const TrainerState& state,
                      TrainerControl& control);
// DefaultFlowCallback.on_epoch_end.
void flow_on_epoch_end(const TrainingArguments& args, TrainerControl& control);

// "eval_" + metric unless it has the prefix (HF's metric_to_check).
std::string metric_to_check(const TrainingArguments& args);
// The metric's value in evaluation results; an Error lists the metrics there are.
double metric_value(const nlohmann::json& metrics, const std::string& key);

// EarlyStoppingCallback: stops after `patience` evaluations in a row that do not improve the
// best metric by more than `threshold`.
class EarlyStoppingCallback : public TrainerCallback {
 public:
  EarlyStoppingCallback(int64_t patience, double threshold)
      : patience_(patience), threshold_(threshold) {}
  std::string name() const override { return "EarlyStoppingCallback"; }
  void on_evaluate(const TrainingArguments& args, const TrainerState& state,
                   TrainerControl& control, const nlohmann::json& metrics) override;
  nlohmann::json to_state() const override;
  void restore(const nlohmann::json& state) override;
  int64_t patience_counter() const { return counter_; }

 private:
  int64_t patience_;
  double threshold_;
  int64_t counter_ = 0;
};

}  // namespace kiln
