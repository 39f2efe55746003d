// Learning-rate schedules as transformers.get_scheduler builds them (LambdaLR over the lambdas
// of transformers/optimization.py, or torch's ReduceLROnPlateau), and their state in a
// checkpoint's scheduler.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/train/lr_plateau.h"
#include "kiln/train/training_arguments.h"

namespace kiln {

struct LrSchedule {
  LrSchedulerType type = LrSchedulerType::linear;
  double base_lr = 5e-5;
  int64_t num_warmup_steps = 0;
  int64_t num_training_steps = 0;
  nlohmann::json kwargs = nlohmann::json::object();  // as given; the fields below come from it
  double num_cycles = 0.5;         // cosine family and warmup_stable_decay's cosine decay
  double lr_end = 1e-7;            // polynomial
  double power = 1.0;              // polynomial
  int64_t timescale = 10000;       // inverse_sqrt (default: num_warmup_steps, or 10000)
  double min_lr_rate = 0.0;        // cosine_with_min_lr
  int64_t num_stable_steps = 0;    // warmup_stable_decay
  int64_t num_decay_steps = 0;     // warmup_stable_decay
  std::string warmup_type = "linear";  // warmup_stable_decay: linear, cosine or 1-sqrt
  std::string decay_type = "cosine";   // warmup_stable_decay: linear, cosine or 1-sqrt
  double min_lr_ratio = 0.0;           // warmup_stable_decay
  std::optional<LrPlateau> plateau;    // reduce_lr_on_plateau: the rate follows its state

  // The lambda of optimization.py at `step` (LambdaLR's last_epoch); 1 for reduce_lr_on_plateau.
  double multiplier(int64_t step) const;
  // base_lr * multiplier(step): the rate of the update that follows `step` finished updates
  // (so the first update uses lr(0)), and what HF logs as learning_rate at global step `step`.
  // reduce_lr_on_plateau: the rate its last step left.
  double lr(int64_t step) const { return plateau ? plateau->lr : base_lr * multiplier(step); }
};

// The schedule of `type` with the --lr_scheduler_kwargs `kwargs`, checked as get_scheduler and the
// scheduler functions check them; errors name --lr_scheduler_kwargs and the key.
LrSchedule lr_schedule_make(LrSchedulerType type, double base_lr, int64_t num_warmup_steps,
                            int64_t num_training_steps, const nlohmann::json& kwargs);

// The schedule of a run of `num_training_steps` updates (TrainingPlan::max_steps), with
// warmup_steps_for(args, num_training_steps) warmup steps.
LrSchedule lr_schedule_for(const TrainingArguments& args, int64_t num_training_steps);

// A schedule and how far it has run: torch's LambdaLR state (last_epoch = updates done).
struct LrScheduleState {
  LrSchedule schedule;
  int64_t last_epoch = 0;
};

// scheduler.json, written atomically: the schedule's parameters and kwargs, last_epoch, last_lr,
// and for reduce_lr_on_plateau its state ("plateau").
void lr_schedule_write_state(const std::string& path, const LrScheduleState& state);
// Reads scheduler.json back (also those written before lr_scheduler_kwargs existed); missing
// keys or wrong types are errors naming the file and key.
LrScheduleState lr_schedule_read_state(const std::string& path);

}  // namespace kiln
