// The schedule lambdas of transformers/optimization.py, term for term, and scheduler.json.
#include "kiln/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kiln/io/atomic_file.h"
#include "kiln/train/checkpoint_json.h"
#include "kiln/train/log_python_json.h"
#include "kiln/train/lr_schedule_kwargs.h"

namespace kiln {
namespace {

constexpr std::string_view kKwargsFlag = "--lr_scheduler_kwargs";
constexpr double kPi = std::numbers::pi;

double warmup_fraction(int64_t step, int64_t num_warmup_steps) {
  // max(1, num_warmup_steps): no warmup means no division by zero.
  return static_cast<double>(step) / std::max(1.0, static_cast<double>(num_warmup_steps));
}

// _get_wsd_scheduler_lambda.
double warmup_stable_decay(const LrSchedule& s, int64_t step) {
  auto shaped = [&s](double factor) {
    return std::max(0.0, factor * (1.0 - s.min_lr_ratio) + s.min_lr_ratio);
  };
  if (step < s.num_warmup_steps) {
    const double progress = warmup_fraction(step, s.num_warmup_steps);
    if (s.warmup_type == "linear") return shaped(progress);
    if (s.warmup_type == "cosine") return shaped(0.5 * (1.0 - std::cos(kPi * progress)));
    return shaped(1.0 - std::sqrt(1.0 - progress));
  }
  if (step < s.num_warmup_steps + s.num_stable_steps) return 1.0;
  if (step < s.num_warmup_steps + s.num_stable_steps + s.num_decay_steps) {
    const double progress = static_cast<double>(step - s.num_warmup_steps - s.num_stable_steps) /
                            static_cast<double>(std::max<int64_t>(1, s.num_decay_steps));
    if (s.decay_type == "linear") return shaped(1.0 - progress);
    if (s.decay_type == "cosine") {
      return shaped(0.5 * (1.0 + std::cos(kPi * s.num_cycles * 2.0 * progress)));
    }
    return shaped(1.0 - std::sqrt(progress));
  }
  return s.min_lr_ratio;
}

}  // namespace

double LrSchedule::multiplier(int64_t step) const {
  using T = LrSchedulerType;
  if (type == T::constant || type == T::reduce_lr_on_plateau) return 1.0;
  if (type == T::warmup_stable_decay) return warmup_stable_decay(*this, step);
  if (step < num_warmup_steps) return warmup_fraction(step, num_warmup_steps);
  if (type == T::constant_with_warmup) return 1.0;
  const auto current = static_cast<double>(step);
  const auto warmup = static_cast<double>(num_warmup_steps);
  const auto total = static_cast<double>(num_training_steps);
  if (type == T::inverse_sqrt) {
    const auto shift = static_cast<double>(timescale - num_warmup_steps);
    return 1.0 / std::sqrt((current + shift) / static_cast<double>(timescale));
  }
  if (type == T::polynomial) {
    if (step > num_training_steps) return lr_end / base_lr;
    const double pct_remaining = 1.0 - (current - warmup) / (total - warmup);
    return ((base_lr - lr_end) * std::pow(pct_remaining, power) + lr_end) / base_lr;
  }
  const double decay_steps = std::max(1.0, total - warmup);
  if (type == T::linear) return std::max(0.0, (total - current) / decay_steps);
  const double progress = (current - warmup) / decay_steps;
  if (type == T::cosine_with_restarts) {
    if (progress >= 1.0) return 0.0;
    return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * std::fmod(num_cycles * progress, 1.0))));
  }
  const double factor = 0.5 * (1.0 + std::cos(kPi * num_cycles * 2.0 * progress));
  return std::max(0.0, factor * (1.0 - min_lr_rate) + min_lr_rate);  // cosine: min_lr_rate 0
}

LrSchedule lr_schedule_make(LrSchedulerType type, double base_lr, int64_t num_warmup_steps,
                            int64_t num_training_steps, const nlohmann::json& kwargs) {
  using T = LrSchedulerType;
  LrSchedule s;
  s.type = type;
  s.base_lr = base_lr;
  s.num_warmup_steps = num_warmup_steps;
  s.num_training_steps = num_training_steps;
  s.kwargs = kwargs;
  const std::string name(lr_scheduler_type_name(type));
  if (type == T::reduce_lr_on_plateau) {
    s.plateau = lr_plateau_make(base_lr, kwargs, kKwargsFlag);
    return s;
  }
  KwargsReader reader(kwargs, kKwargsFlag);
  if (type == T::cosine_with_restarts) s.num_cycles = 1.0;
  if (type == T::cosine || type == T::cosine_with_restarts || type == T::cosine_with_min_lr ||
      type == T::warmup_stable_decay) {
    reader.number("num_cycles", s.num_cycles);
  }
  if (type == T::polynomial) {
    reader.number("lr_end", s.lr_end);
    reader.number("power", s.power);
    check(base_lr > s.lr_end, kKwargsFlag, "key 'lr_end': lr_end (", s.lr_end,
          ") must be smaller than initial lr (", base_lr, ")");
  }
  if (type == T::inverse_sqrt) {
    std::optional<int64_t> timescale;
    reader.integer("timescale", timescale);
    s.timescale = timescale.value_or(num_warmup_steps > 0 ? num_warmup_steps : 10000);
    check(s.timescale > 0, kKwargsFlag, "key 'timescale': must be positive, got ", s.timescale);
  }
  if (type == T::cosine_with_min_lr) {
    std::optional<double> min_lr;
    std::optional<double> min_lr_rate;
    reader.number("min_lr", min_lr);
    reader.number("min_lr_rate", min_lr_rate);
    check(!(min_lr && min_lr_rate), kKwargsFlag, "Only one of min_lr or min_lr_rate should be set");
    check(min_lr || min_lr_rate, kKwargsFlag,
          "cosine_with_min_lr needs min_lr or min_lr_rate, e.g. '{\"min_lr_rate\": 0.1}'");
    s.min_lr_rate = min_lr ? *min_lr / base_lr : *min_lr_rate;
  }
  if (type == T::warmup_stable_decay) {
    std::optional<int64_t> num_decay_steps;
    std::optional<int64_t> num_stable_steps;
    reader.integer("num_decay_steps", num_decay_steps);
    reader.integer("num_stable_steps", num_stable_steps);
    reader.choice("warmup_type", s.warmup_type, {"linear", "cosine", "1-sqrt"});
    reader.choice("decay_type", s.decay_type, {"linear", "cosine", "1-sqrt"});
    reader.number("min_lr_ratio", s.min_lr_ratio);
    check(num_decay_steps.has_value(), kKwargsFlag,
          "warmup_stable_decay needs num_decay_steps, e.g. '{\"num_decay_steps\": 100}'");
    s.num_decay_steps = *num_decay_steps;
    s.num_stable_steps =
        num_stable_steps.value_or(num_training_steps - num_warmup_steps - s.num_decay_steps);
  }
  reader.finish(name);
  return s;
}

LrSchedule lr_schedule_for(const TrainingArguments& args, int64_t num_training_steps) {
  return lr_schedule_make(args.lr_scheduler_type, args.learning_rate,
                          warmup_steps_for(args, num_training_steps), num_training_steps,
                          args.lr_scheduler_kwargs);
}

void lr_schedule_write_state(const std::string& path, const LrScheduleState& state) {
  const LrSchedule& schedule = state.schedule;
  nlohmann::json object = {
      {"lr_scheduler_type", std::string(lr_scheduler_type_name(schedule.type))},
      {"base_lr", schedule.base_lr},
      {"num_warmup_steps", schedule.num_warmup_steps},
      {"num_training_steps", schedule.num_training_steps},
      {"lr_scheduler_kwargs", schedule.kwargs},
      {"last_epoch", state.last_epoch},
      {"last_lr", schedule.lr(state.last_epoch)},
  };
  if (schedule.plateau) object["plateau"] = lr_plateau_state_json(*schedule.plateau);
  write_file_atomically(path, python_json_dumps(object, 2) + "\n");
}

LrScheduleState lr_schedule_read_state(const std::string& path) {
  nlohmann::json object = read_json_object(path);
  auto name = json_field<std::string>(object, "lr_scheduler_type", path);
  std::optional<LrSchedulerType> type = lr_scheduler_type_from_name(name);
  check(type.has_value(), path, "key 'lr_scheduler_type': unknown scheduler '", name, "'");
  // Files from before lr_scheduler_kwargs have only num_cycles, which was always cosine's 0.5.
  nlohmann::json kwargs = object.value("lr_scheduler_kwargs", nlohmann::json::object());
  // Read in order, so that the first bad key is the one reported.
  const auto base_lr = json_field<double>(object, "base_lr", path);
  const auto num_warmup_steps = json_field<int64_t>(object, "num_warmup_steps", path);
  const auto num_training_steps = json_field<int64_t>(object, "num_training_steps", path);
  LrScheduleState state;
  state.schedule = lr_schedule_make(*type, base_lr, num_warmup_steps, num_training_steps, kwargs);
  if (state.schedule.plateau) {
    check(object.contains("plateau"), path, "key 'plateau' is missing");
    lr_plateau_load_state(*state.schedule.plateau, object["plateau"], path);
  }
  state.last_epoch = json_field<int64_t>(object, "last_epoch", path);
  check(state.last_epoch >= 0, path, "key 'last_epoch': negative ", state.last_epoch);
  return state;
}

}  // namespace kiln
