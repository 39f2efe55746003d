// SGD as torch.optim.SGD: L2 weight decay added to the gradient, optional (Nesterov) momentum.
#include "kiln/ir/error.h"
#include "kiln/train/optimizer_rules.h"

namespace kiln {
namespace {

class Sgd final : public Optimizer {
 public:
  Sgd(double weight_decay, double momentum, double dampening, bool nesterov)
      : weight_decay_(weight_decay), momentum_(momentum), dampening_(dampening),
        nesterov_(nesterov) {}

  // A momentum buffer only with momentum, as torch keeps none without.
  std::vector<OptimizerSlot> slots(const Shape& shape) const override {
    if (momentum_ == 0.0) return {};
    return {{"momentum_buffer", shape}};
  }

  OptimizerUpdate update(Value param, Value grad, const std::vector<Value>& slots,
                         Value learning_rate, Value step, bool decay) const override {
    if (decay && weight_decay_ != 0.0) grad = grad + param * weight_decay_;
    if (momentum_ == 0.0) return {param - learning_rate * grad, {}};
    // torch's first update copies the gradient into the buffer, without dampening.
    Value first = eq(step, scalar_like(step, 1.0));
    Value buffer =
        select(broadcast_to(first, grad.shape()), grad,
               slots[0] * momentum_ + grad * (1.0 - dampening_));
    Value direction = nesterov_ ? grad + buffer * momentum_ : buffer;
    return {param - learning_rate * direction, {buffer}};
  }

 private:
  double weight_decay_, momentum_, dampening_;
  bool nesterov_;
};

}  // namespace

std::unique_ptr<Optimizer> make_sgd(const OptimizerConfig& config) {
  OptimArgs args(config.args, config.name, {"momentum", "dampening", "nesterov"});
  double momentum = args.number("momentum", 0.0);
  double dampening = args.number("dampening", 0.0);
  bool nesterov = args.flag("nesterov", false);
  check(!nesterov || (momentum > 0.0 && dampening == 0.0), "--optim_args",
        "nesterov needs momentum > 0 and dampening 0 (as torch.optim.SGD)");
  return std::make_unique<Sgd>(config.weight_decay, momentum, dampening, nesterov);
}

}  // namespace kiln
