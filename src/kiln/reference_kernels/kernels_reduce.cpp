// Reference kernels of reduce_sum and reduce_max: floating values accumulate in double and are
// rounded once; integers accumulate in int64 and wrap to the dtype.
#include <cmath>
#include <limits>

#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"

namespace kiln::reference {
namespace {

// Strides that map an index of x to the flat index of the output element it reduces into: 0 along
// the reduced dims, the output's row-major strides along the kept ones.
std::vector<int64_t> target_strides(const Shape& shape, const Axes& axes) {
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t axis : axes) reduced[static_cast<size_t>(axis)] = true;
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (reduced[d]) continue;
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

// Walks x in row-major order and folds each element into its output slot, so every slot sees
// its elements in row-major order; accumulates in the compute type C (double or int64).
template <typename C, typename Op>
Tensor reduce_as(const Node& node, const Tensor& x, C init, Op op) {
  Tensor out(x.dtype(), node.shape);
  std::vector<C> acc(static_cast<size_t>(out.numel()), init);
  auto fold = [&]<typename T>() {
    const T* in = x.data_as<T>();
    walk_rows(x.shape(), shape_strides(x.shape()),
              target_strides(x.shape(), node.attr<ReduceAttrs>().axes),
              [&](int64_t from, int64_t to, int64_t count, int64_t from_step, int64_t to_step) {
                for (int64_t j = 0; j < count; ++j) {
                  C& slot = acc[static_cast<size_t>(to + j * to_step)];
                  slot = op(slot, widen(in[from + j * from_step]));
                }
              });
    T* o = out.data_as<T>();
    for (size_t i = 0; i < acc.size(); ++i) o[i] = narrow<T>(acc[i]);
  };
  if constexpr (std::same_as<C, double>) {
    visit_floating(node, x.dtype(), fold);
  } else {
    visit_integer(node, x.dtype(), fold);
  }
  return out;
}

template <typename FloatOp, typename IntOp>
Tensor reduce(const Node& node, const Tensor& x, double float_init, int64_t int_init,
              FloatOp float_op, IntOp int_op) {
  if (is_floating(x.dtype())) return reduce_as(node, x, float_init, float_op);
  return reduce_as(node, x, int_init, int_op);
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
