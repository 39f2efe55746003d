// RMSprop as torch.optim.RMSprop: L2 weight decay, optional centering and momentum.
#include "kiln/train/optimizer_rules.h"

namespace kiln {
namespace {

class Rmsprop final : public Optimizer {
 public:
  Rmsprop(double weight_decay, double alpha, double eps, double momentum, bool centered)
      : weight_decay_(weight_decay), alpha_(alpha), eps_(eps), momentum_(momentum),
        centered_(centered) {}

  // square_avg always; grad_avg when centered; momentum_buffer with momentum (torch's names).
  std::vector<OptimizerSlot> slots(const Shape& shape) const override {
    std::vector<OptimizerSlot> out = {{"square_avg", shape}};
    if (centered_) out.push_back({"grad_avg", shape});
    if (momentum_ > 0.0) out.push_back({"momentum_buffer", shape});
    return out;
  }

  OptimizerUpdate update(Value param, Value grad, const std::vector<Value>& slots,
                         Value learning_rate, Value /*step*/, bool decay) const override {
    if (decay && weight_decay_ != 0.0) grad = grad + param * weight_decay_;
    size_t next = 0;
    Value square_avg = slots[next++] * alpha_ + (grad * (1.0 - alpha_)) * grad;
    std::vector<Value> out = {square_avg};
    Value avg;
    if (centered_) {
      Value grad_avg = slots[next++] * alpha_ + grad * (1.0 - alpha_);
      out.push_back(grad_avg);
      avg = sqrt(square_avg - grad_avg * grad_avg) + eps_;
    } else {
      avg = sqrt(square_avg) + eps_;
    }
    if (momentum_ > 0.0) {
      Value buffer = slots[next] * momentum_ + grad / avg;
      out.push_back(buffer);
      return {param - learning_rate * buffer, out};
    }
    return {param - learning_rate * (grad / avg), out};
  }

 private:
  double weight_decay_, alpha_, eps_, momentum_;
  bool centered_;
};

}  // namespace

std::unique_ptr<Optimizer> make_rmsprop(const OptimizerConfig& config) {
  OptimArgs args(config.args, config.name, {"momentum", "alpha", "eps", "centered"});
  return std::make_unique<Rmsprop>(config.weight_decay, args.number("alpha", 0.99),
                                   args.number("eps", 1e-8), args.number("momentum", 0.0),
                                   args.flag("centered", false));
}

}  // namespace kiln
