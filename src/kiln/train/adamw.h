// AdamW (decoupled weight decay, as torch.optim.AdamW) expressed in the graph, so the optimizer
// update compiles into the same program as the forward and backward passes.
#pragma once

#include "kiln/ir/ops.h"

namespace kiln {

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;
};

struct AdamWSlot {
  Value param;
  Value m;  // first moment, same shape and dtype as param
  Value v;  // second moment
};

// The updated slot for one parameter. `learning_rate` and `step` (1-based, for the bias
// correction) are rank-0 values of the parameter's dtype, usually inputs so that a schedule
// changes them without recompiling. `decay` false skips weight decay (biases, LayerNorm).
AdamWSlot adamw_update(const AdamWSlot& slot, Value grad, Value learning_rate, Value step,
                       const AdamWConfig& config, bool decay = true);

}  // namespace kiln
