// Adagrad as torch.optim.Adagrad: L2 weight decay, learning-rate decay by step, summed squares.
#include "kiln/train/optimizer_rules.h"

namespace kiln {
namespace {

class Adagrad final : public Optimizer {
 public:
  Adagrad(double weight_decay, double lr_decay, double eps)
      : weight_decay_(weight_decay), lr_decay_(lr_decay), eps_(eps) {}

  std::vector<OptimizerSlot> slots(const Shape& shape) const override { return {{"sum", shape}}; }

  OptimizerUpdate update(Value param, Value grad, const std::vector<Value>& slots,
                         Value learning_rate, Value step, bool decay) const override {
    if (decay && weight_decay_ != 0.0) grad = grad + param * weight_decay_;
    Value clr = learning_rate / ((step - 1.0) * lr_decay_ + 1.0);
    Value sum = slots[0] + grad * grad;
    Value std = sqrt(sum) + eps_;
    return {param - clr * (grad / std), {sum}};
  }

 private:
  double weight_decay_, lr_decay_, eps_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adagrad(const OptimizerConfig& config) {
  OptimArgs args(config.args, config.name, {"lr_decay", "eps"});
  return std::make_unique<Adagrad>(config.weight_decay, args.number("lr_decay", 0.0),
                                   args.number("eps", 1e-10));
}

}  // namespace kiln
