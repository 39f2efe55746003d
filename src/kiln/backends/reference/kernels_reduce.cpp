// Reference kernels of reduce_sum and reduce_max: floating values accumulate in double and are
// rounded once; integers accumulate in int64 and wrap to the dtype.
#include <cmath>
#include <limits>

#include "kiln/backends/reference/kernel_util.h"
#include "kiln/backends/reference/kernels.h"

namespace kiln::reference {
namespace {

// For each element of x (row-major), the flat index of the output element it reduces into.
std::vector<int64_t> reduce_targets(const Tensor& x, const Axes& axes) {
  std::vector<bool> reduced(x.shape().size(), false);
  for (int64_t axis : axes) reduced[static_cast<size_t>(axis)] = true;
  Shape kept;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) kept.push_back(x.shape()[d]);
  }
  std::vector<int64_t> kept_strides = shape_strides(kept);
  std::vector<int64_t> targets(static_cast<size_t>(x.numel()));
  std::vector<int64_t> index(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, next_index(index, x.shape())) {
    int64_t target = 0;
    for (size_t d = 0, k = 0; d < index.size(); ++d) {
      if (!reduced[d]) target += index[d] * kept_strides[k++];
    }
    targets[static_cast<size_t>(i)] = target;
  }
  return targets;
}

template <typename FloatOp, typename IntOp>
Tensor reduce(const Node& node, const Tensor& x, double float_init, int64_t int_init,
              FloatOp float_op, IntOp int_op) {
  std::vector<int64_t> targets = reduce_targets(x, node.attr<ReduceAttrs>().axes);
  Tensor out(node.dtype, node.shape);
  auto count = static_cast<size_t>(out.numel());
  if (is_floating(x.dtype())) {
    std::vector<double> acc(count, float_init);
    for (int64_t i = 0; i < x.numel(); ++i) {
      double& slot = acc[static_cast<size_t>(targets[static_cast<size_t>(i)])];
      slot = float_op(slot, x.get(i));
    }
    for (size_t i = 0; i < count; ++i) out.set(static_cast<int64_t>(i), acc[i]);
  } else if (is_integer(x.dtype())) {
    std::vector<int64_t> acc(count, int_init);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t& slot = acc[static_cast<size_t>(targets[static_cast<size_t>(i)])];
      slot = int_op(slot, load_int(x, i));
    }
    for (size_t i = 0; i < count; ++i) store_int(out, static_cast<int64_t>(i), acc[i]);
  } else {
    fail_dtype(node, x.dtype());
  }
  return out;
}

// The identity of max over an empty set: the smallest value of the dtype.
int64_t int_lowest(DType dtype) {
  if (dtype == DType::i32) return std::numeric_limits<int32_t>::min();
  if (dtype == DType::u32) return 0;
  return std::numeric_limits<int64_t>::min();
}

}  // namespace

Tensor kernel_reduce_sum(const Node& node, Operands operands) {
  return reduce(
      node, operands[0], 0.0, 0, [](double a, double b) { return a + b; }, wrap_add);
}

// NaN propagates: a NaN element replaces the slot, and nothing compares greater than a NaN slot.
Tensor kernel_reduce_max(const Node& node, Operands operands) {
  return reduce(
      node, operands[0], -std::numeric_limits<double>::infinity(), int_lowest(operands[0].dtype()),
      [](double acc, double v) { return std::isnan(v) || v > acc ? v : acc; },
      [](int64_t acc, int64_t v) { return v > acc ? v : acc; });
}

}  // namespace kiln::reference
