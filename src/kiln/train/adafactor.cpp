// Adafactor as transformers.optimization.Adafactor is built by the Trainer (--optim adafactor):
// scale_parameter=False, relative_step=False, no first moment, eps (1e-30, 1e-3), clip_threshold
// 1, decay_rate -0.8; the second moment factored into row and column means for 2-D and larger
// parameters.
#include "kiln/train/optimizer_rules.h"

namespace kiln {
namespace {

constexpr double kEpsilon = 1e-30;     // eps[0], added to the squared gradient
constexpr double kClipThreshold = 1.0;
constexpr double kDecayRate = -0.8;

Value root_mean_square(Value x) { return sqrt(mean(x * x)); }

class Adafactor final : public Optimizer {
 public:
  explicit Adafactor(double weight_decay) : weight_decay_(weight_decay) {}

  // "exp_avg_sq_row" (shape[:-1]) and "exp_avg_sq_col" (shape[:-2] + shape[-1:]) when factored,
  // else "exp_avg_sq": transformers' names.
  std::vector<OptimizerSlot> slots(const Shape& shape) const override {
    if (shape.size() < 2) return {{"exp_avg_sq", shape}};
    Shape row(shape.begin(), shape.end() - 1);
    Shape col(shape.begin(), shape.end() - 2);
    col.push_back(shape.back());
    return {{"exp_avg_sq_row", row}, {"exp_avg_sq_col", col}};
  }

  OptimizerUpdate update(Value param, Value grad, const std::vector<Value>& slots,
                         Value learning_rate, Value step, bool decay) const override {
    Value beta2t = 1.0 - pow(step, kDecayRate);
    Value add = 1.0 - beta2t;
    Value squared = grad * grad + kEpsilon;
    const Shape& shape = param.shape();
    const auto rank = static_cast<int64_t>(shape.size());
    Value direction;
    std::vector<Value> out;
    if (rank >= 2) {
      Value row = slots[0] * beta2t + mean(squared, {rank - 1}) * add;
      Value col = slots[1] * beta2t + mean(squared, {rank - 2}) * add;
      out = {row, col};
      // transformers' _approx_sq_grad: rsqrt(row / mean(row)) x rsqrt(col), as an outer product.
      Value row_factor = rsqrt(row / mean(row, {rank - 2}, true));
      Value col_factor = rsqrt(col);
      Axes row_dims, col_dims;
      for (int64_t d = 0; d < rank; ++d) {
        if (d != rank - 1) row_dims.push_back(d);
        if (d != rank - 2) col_dims.push_back(d);
      }
      direction = broadcast_in_dim(row_factor, shape, row_dims) *
                  broadcast_in_dim(col_factor, shape, col_dims) * grad;
    } else {
      Value second = slots[0] * beta2t + squared * add;
      out = {second};
      direction = rsqrt(second) * grad;
    }
    direction = direction / max(root_mean_square(direction) / kClipThreshold,
                                scalar_like(learning_rate, 1.0));
    direction = direction * learning_rate;
    if (decay && weight_decay_ != 0.0) param = param + param * (learning_rate * -weight_decay_);
    return {param - direction, out};
  }

 private:
  double weight_decay_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adafactor(const OptimizerConfig& config) {
  OptimArgs(config.args, config.name, {});  // HF passes no --optim_args to Adafactor
  return std::make_unique<Adafactor>(config.weight_decay);
}

}  // namespace kiln
