// ReduceLROnPlateau.step of torch/optim/lr_scheduler.py, term for term.
#include "kiln/train/lr_plateau.h"

#include <algorithm>
#include <limits>

#include "kiln/ir/error.h"
#include "kiln/train/checkpoint_json.h"
#include "kiln/train/lr_schedule_kwargs.h"

namespace kiln {
namespace {

double worst_metric(const std::string& mode) {
  const double inf = std::numeric_limits<double>::infinity();
  return mode == "min" ? inf : -inf;
}

}  // namespace

void LrPlateau::step(double metric) {
  ++last_epoch;
  // torch's _is_better.
  bool better;
  if (mode == "min") {
    better =
        threshold_mode == "rel" ? metric < best * (1.0 - threshold) : metric < best - threshold;
  } else {
    better =
        threshold_mode == "rel" ? metric > best * (threshold + 1.0) : metric > best + threshold;
  }
  if (better) {
    best = metric;
    num_bad_epochs = 0;
  } else {
    ++num_bad_epochs;
  }
  if (cooldown_counter > 0) {
    --cooldown_counter;
    num_bad_epochs = 0;  // bad epochs in cooldown do not count
  }
  if (num_bad_epochs > patience) {
    const double reduced = std::max(lr * factor, min_lr);
    if (lr - reduced > eps) lr = reduced;
    cooldown_counter = cooldown;
    num_bad_epochs = 0;
  }
}

LrPlateau lr_plateau_make(double lr, const nlohmann::json& kwargs, std::string_view where) {
  LrPlateau plateau;
  KwargsReader reader(kwargs, where);
  reader.choice("mode", plateau.mode, {"min", "max"});
  reader.number("factor", plateau.factor);
  reader.integer("patience", plateau.patience);
  reader.number("threshold", plateau.threshold);
  reader.choice("threshold_mode", plateau.threshold_mode, {"rel", "abs"});
  reader.integer("cooldown", plateau.cooldown);
  reader.number("min_lr", plateau.min_lr);
  reader.number("eps", plateau.eps);
  reader.finish("reduce_lr_on_plateau");
  check(plateau.factor < 1.0, where, "key 'factor': Factor should be < 1.0, got ", plateau.factor);
  plateau.lr = lr;
  plateau.best = worst_metric(plateau.mode);
  return plateau;
}

nlohmann::json lr_plateau_state_json(const LrPlateau& plateau) {
  const bool seen = plateau.best != worst_metric(plateau.mode);
  return {{"lr", plateau.lr},
          {"best", seen ? nlohmann::json(plateau.best) : nlohmann::json(nullptr)},
          {"num_bad_epochs", plateau.num_bad_epochs},
          {"cooldown_counter", plateau.cooldown_counter},
          {"last_epoch", plateau.last_epoch}};
}

void lr_plateau_load_state(LrPlateau& plateau, const nlohmann::json& state,
                           std::string_view where) {
  check(state.is_object(), where, "key 'plateau': expected an object, got ", state.dump());
  plateau.lr = json_field<double>(state, "lr", where);
  auto best = state.find("best");
  plateau.best = best != state.end() && best->is_null() ? worst_metric(plateau.mode)
                                                        : json_field<double>(state, "best", where);
  plateau.num_bad_epochs = json_field<int64_t>(state, "num_bad_epochs", where);
  plateau.cooldown_counter = json_field<int64_t>(state, "cooldown_counter", where);
  plateau.last_epoch = json_field<int64_t>(state, "last_epoch", where);
}

}  // namespace kiln
