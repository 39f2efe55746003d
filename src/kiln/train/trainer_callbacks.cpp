// TrainerControl, the default flow and early stopping, decision for decision as HF's callbacks.
#include "kiln/train/trainer_callbacks.h"

#include <cmath>

#include "kiln/ir/error.h"

namespace kiln {

nlohmann::json TrainerControl::to_state() const {
  return {{"args",
           {{"should_training_stop", should_training_stop},
            {"should_epoch_stop", should_epoch_stop},
            {"should_save", should_save},
            {"should_evaluate", should_evaluate},
            {"should_log", should_log}}},
          {"attributes", nlohmann::json::object()}};
}

TrainerControl TrainerControl::from_state(const nlohmann::json& state) {
  TrainerControl control;
  if (!state.is_object() || !state.contains("args")) return control;
  const nlohmann::json& args = state["args"];
  auto flag = [&](const char* key) { return args.value(key, false); };
  control.should_training_stop = flag("should_training_stop");
  control.should_epoch_stop = flag("should_epoch_stop");
  control.should_save = flag("should_save");
  control.should_evaluate = flag("should_evaluate");
  control.should_log = flag("should_log");
  return control;
}

void flow_on_step_end(const TrainingArguments& args, const TrainerState& state,
                      TrainerControl& control) {
  const int64_t step = state.global_step;
  if (step == 1 && args.logging_first_step) control.should_log = true;
  if (args.logging_strategy == IntervalStrategy::steps && step % state.logging_steps == 0) {
    control.should_log = true;
  }
  if (args.eval_strategy == IntervalStrategy::steps && step % state.eval_steps == 0) {
    control.should_evaluate = true;
  }
  if (args.save_strategy == SaveStrategy::steps && state.save_steps > 0 &&
      step % state.save_steps == 0) {
    control.should_save = true;
  }
  if (step >= state.max_steps) {
    control.should_training_stop = true;
    // HF saves at the end of training under a steps or epoch save strategy ("best" saves only
    // what improves).
    if (args.save_strategy == SaveStrategy::steps || args.save_strategy == SaveStrategy::epoch) {
      control.should_save = true;
    }
  }
}

void flow_on_epoch_end(const TrainingArguments& args, TrainerControl& control) {
  if (args.logging_strategy == IntervalStrategy::epoch) control.should_log = true;
  if (args.eval_strategy == IntervalStrategy::epoch) control.should_evaluate = true;
  if (args.save_strategy == SaveStrategy::epoch) control.should_save = true;
}

std::string metric_to_check(const TrainingArguments& args) {
  std::string metric = args.metric_for_best_model.value_or("loss");
  return metric.starts_with("eval_") ? metric : "eval_" + metric;
}

double metric_value(const nlohmann::json& metrics, const std::string& key) {
  if (metrics.contains(key) && metrics[key].is_number()) return metrics[key].get<double>();
  std::string available;
  for (const auto& [name, value] : metrics.items()) {
    if (value.is_number()) available += (available.empty() ? "" : ", ") + name;
  }
  fail("--metric_for_best_model", "The metric '", key,
       "' is not in the evaluation results; the metrics there are: ", available);
}

void EarlyStoppingCallback::on_evaluate(const TrainingArguments& args, const TrainerState& state,
                                        TrainerControl& control, const nlohmann::json& metrics) {
  double value = metric_value(metrics, metric_to_check(args));
  bool greater = args.greater_is_better.value_or(false);
  bool better =
      state.best_metric && (greater ? value > *state.best_metric : value < *state.best_metric);
  if (!state.best_metric || (better && std::abs(value - *state.best_metric) > threshold_)) {
    counter_ = 0;
  } else {
    ++counter_;
  }
  if (counter_ >= patience_) control.should_training_stop = true;
}

nlohmann::json EarlyStoppingCallback::to_state() const {
  return {
      {"args", {{"early_stopping_patience", patience_}, {"early_stopping_threshold", threshold_}}},
      {"attributes", {{"early_stopping_patience_counter", counter_}}}};
}

void EarlyStoppingCallback::restore(const nlohmann::json& state) {
  if (state.is_object() && state.contains("attributes")) {
    counter_ = state["attributes"].value("early_stopping_patience_counter", int64_t{0});
  }
}

}  // namespace kiln
