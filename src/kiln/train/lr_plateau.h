// torch.optim.lr_scheduler.ReduceLROnPlateau, which transformers' reduce_lr_on_plateau builds:
// the rate is cut by `factor` when the evaluation metric has not improved for `patience` steps.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kiln {

struct LrPlateau {
  // Settings (the --lr_scheduler_kwargs of reduce_lr_on_plateau), with torch's defaults.
  std::string mode = "min";  // "min" or "max": whether a lower or a higher metric is better
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  std::string threshold_mode = "rel";  // "rel" or "abs"
  int64_t cooldown = 0;
  double min_lr = 0.0;
  double eps = 1e-8;
  // State, as torch's state_dict has it.
  double lr = 0.0;  // the optimizer's current rate
  double best = 0.0;  // set by lr_plateau_make: +inf for "min", -inf for "max"
  int64_t num_bad_epochs = 0;
  int64_t cooldown_counter = 0;
  int64_t last_epoch = 0;  // how many metrics it has seen

  // ReduceLROnPlateau.step(metric): one evaluation's metric.
  void step(double metric);
};

// A plateau scheduler starting at `lr` with the settings of `kwargs` (an object of the keys above);
// an unknown key or a bad value is an error naming `where` and the key.
LrPlateau lr_plateau_make(double lr, const nlohmann::json& kwargs, std::string_view where);

// The state as scheduler.json keeps it ("best" is null while no metric has been seen, as JSON has
// no infinity), and back; reading checks types and names the file and key.
nlohmann::json lr_plateau_state_json(const LrPlateau& plateau);
void lr_plateau_load_state(LrPlateau& plateau, const nlohmann::json& state, std::string_view where);

}  // namespace kiln
