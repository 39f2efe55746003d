// AdamW update as graph ops.
#include "kiln/train/adamw.h"

#include "kiln/train/optimizer_rules.h"

namespace kiln {

std::unique_ptr<Optimizer> make_adamw(const OptimizerConfig& config) {
  OptimArgs(config.args, config.name, {});  // HF passes no --optim_args to AdamW
  return std::make_unique<AdamW>(
      AdamWConfig{config.adam_beta1, config.adam_beta2, config.adam_epsilon, config.weight_decay});
}

std::vector<OptimizerSlot> AdamW::slots(const Shape& shape) const {
  return {{"exp_avg", shape}, {"exp_avg_sq", shape}};
}

OptimizerUpdate AdamW::update(Value param, Value grad, const std::vector<Value>& slots,
                              Value learning_rate, Value step, bool decay) const {
  if (decay && config_.weight_decay != 0.0) {
    param = param - param * (learning_rate * config_.weight_decay);
  }
  Value m = slots[0] * config_.beta1 + grad * (1.0 - config_.beta1);
  // (1 - beta2) * grad * grad in torch's addcmul order; as a product that is not grad * grad
  // it is also not merged with the gradient norm's squares, which would then be stored for it.
  Value v = slots[1] * config_.beta2 + (grad * (1.0 - config_.beta2)) * grad;
  Value correction1 = 1.0 - pow(scalar_like(step, config_.beta1), step);
  Value correction2 = 1.0 - pow(scalar_like(step, config_.beta2), step);
  Value denominator = sqrt(v / correction2) + config_.epsilon;
  param = param - (learning_rate / correction1) * (m / denominator);
  return {param, {m, v}};
}

}  // namespace kiln
