// The schedule lambdas of transformers/optimization.py, term for term, and scheduler.json.
#include "kiln/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <nlohmann/json.hpp>

#include "kiln/io/atomic_file.h"
#include "kiln/train/checkpoint_json.h"
#include "kiln/train/log_python_json.h"

namespace kiln {

double LrSchedule::multiplier(int64_t step) const {
  const auto current = static_cast<double>(step);
  const auto warmup = static_cast<double>(num_warmup_steps);
  if (type == LrSchedulerType::constant) return 1.0;
  // Every warmup divides by max(1, num_warmup_steps), so no warmup means no division by zero.
  if (step < num_warmup_steps) return current / std::max(1.0, warmup);
  if (type == LrSchedulerType::constant_with_warmup) return 1.0;
  const double decay_steps = std::max<double>(1.0, static_cast<double>(num_training_steps) - warmup);
  if (type == LrSchedulerType::linear) {
    return std::max(0.0, (static_cast<double>(num_training_steps) - current) / decay_steps);
  }
  const double progress = (current - warmup) / decay_steps;
  return std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * num_cycles * 2.0 * progress)));
}

LrSchedule lr_schedule_for(const TrainingArguments& args, int64_t num_training_steps) {
  LrSchedule schedule;
  schedule.type = args.lr_scheduler_type;
  schedule.base_lr = args.learning_rate;
  schedule.num_training_steps = num_training_steps;
  schedule.num_warmup_steps = warmup_steps_for(args, num_training_steps);
  return schedule;
}

void lr_schedule_write_state(const std::string& path, const LrScheduleState& state) {
  const LrSchedule& schedule = state.schedule;
  nlohmann::json object = {
      {"lr_scheduler_type", std::string(lr_scheduler_type_name(schedule.type))},
      {"base_lr", schedule.base_lr},
      {"num_warmup_steps", schedule.num_warmup_steps},
      {"num_training_steps", schedule.num_training_steps},
      {"num_cycles", schedule.num_cycles},
      {"last_epoch", state.last_epoch},
      {"last_lr", schedule.lr(state.last_epoch)},
  };
  write_file_atomically(path, python_json_dumps(object, 2) + "\n");
}

LrScheduleState lr_schedule_read_state(const std::string& path) {
  nlohmann::json object = read_json_object(path);
  LrScheduleState state;
  auto name = json_field<std::string>(object, "lr_scheduler_type", path);
  std::optional<LrSchedulerType> type = lr_scheduler_type_from_name(name);
  check(type.has_value(), path, "key 'lr_scheduler_type': unknown scheduler '", name, "'");
  state.schedule.type = *type;
  state.schedule.base_lr = json_field<double>(object, "base_lr", path);
  state.schedule.num_warmup_steps = json_field<int64_t>(object, "num_warmup_steps", path);
  state.schedule.num_training_steps = json_field<int64_t>(object, "num_training_steps", path);
  state.schedule.num_cycles = json_field<double>(object, "num_cycles", path);
  state.last_epoch = json_field<int64_t>(object, "last_epoch", path);
  check(state.last_epoch >= 0, path, "key 'last_epoch': negative ", state.last_epoch);
  return state;
}

}  // namespace kiln
