// AdamW update as graph ops.
#include "kiln/train/adamw.h"

namespace kiln {

AdamWSlot adamw_update(const AdamWSlot& slot, Value grad, Value learning_rate, Value step,
                       const AdamWConfig& config, bool decay) {
  Value param = slot.param;
  if (decay && config.weight_decay != 0.0) {
    param = param - param * (learning_rate * config.weight_decay);
  }
  Value m = slot.m * config.beta1 + grad * (1.0 - config.beta1);
  // (1 - beta2) * grad * grad in torch's addcmul order; as a product that is not grad * grad
  // it is also not merged with the gradient norm's squares, which would then be stored for it.
  Value v = slot.v * config.beta2 + (grad * (1.0 - config.beta2)) * grad;
  Value correction1 = 1.0 - pow(scalar_like(step, config.beta1), step);
  Value correction2 = 1.0 - pow(scalar_like(step, config.beta2), step);
  Value denominator = sqrt(v / correction2) + config.epsilon;
  param = param - (learning_rate / correction1) * (m / denominator);
  return {param, m, v};
}

}  // namespace kiln
