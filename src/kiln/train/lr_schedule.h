// Learning-rate schedules as transformers.get_scheduler builds them (LambdaLR over the lambdas
// of transformers/optimization.py), and their state in a checkpoint's scheduler.json.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/train/training_arguments.h"

namespace kiln {

struct LrSchedule {
  LrSchedulerType type = LrSchedulerType::linear;
  double base_lr = 5e-5;
  int64_t num_warmup_steps = 0;
  int64_t num_training_steps = 0;
  double num_cycles = 0.5;  // cosine only: half a cosine wave from base_lr down to 0

  // The lambda of optimization.py at `step` (LambdaLR's last_epoch): warmup from 0 over
  // num_warmup_steps, then 1 (constant), a linear decay reaching 0 at num_training_steps, or
  // a cosine; never negative.
  double multiplier(int64_t step) const;
  // base_lr * multiplier(step): the rate of the update that follows `step` finished updates
  // (so the first update uses lr(0)), and what HF logs as learning_rate at global step `step`.
  double lr(int64_t step) const { return base_lr * multiplier(step); }
};

// The schedule of a run of `num_training_steps` updates (TrainingPlan::max_steps), with
// warmup_steps_for(args, num_training_steps) warmup steps.
LrSchedule lr_schedule_for(const TrainingArguments& args, int64_t num_training_steps);

// A schedule and how far it has run: torch's LambdaLR state (last_epoch = updates done).
struct LrScheduleState {
  LrSchedule schedule;
  int64_t last_epoch = 0;
};

// scheduler.json, written atomically: the schedule's parameters, last_epoch and last_lr.
void lr_schedule_write_state(const std::string& path, const LrScheduleState& state);
// Reads scheduler.json back; missing keys or wrong types are errors naming the file and key.
LrScheduleState lr_schedule_read_state(const std::string& path);

}  // namespace kiln
