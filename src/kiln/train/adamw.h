// AdamW (decoupled weight decay, as torch.optim.AdamW with HF's betas and epsilon) expressed in
// the graph, so the optimizer update compiles into the same program as forward and backward.
#pragma once

#include "kiln/train/optimizer.h"

namespace kiln {

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;
};

// Slots "exp_avg" and "exp_avg_sq" (torch's names), each of the parameter's shape.
class AdamW final : public Optimizer {
 public:
  explicit AdamW(const AdamWConfig& config) : config_(config) {}
  std::vector<OptimizerSlot> slots(const Shape& shape) const override;
  OptimizerUpdate update(Value param, Value grad, const std::vector<Value>& slots,
                         Value learning_rate, Value step, bool decay) const override;

 private:
  AdamWConfig config_;
};

}  // namespace kiln
