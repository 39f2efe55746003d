// Builders of source ops: constants, filled tensors, iota and counter-based random bits.
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {

Value constant(Graph& graph, const Tensor& value) {
  check(value.nbytes() == static_cast<size_t>(value.numel()) * dtype_size(value.dtype()),
        "constant", "tensor ", detail::type_str(value.dtype(), value.shape()), " has no data");
  // A copy: the caller may keep writing into its tensor, the graph's constant must not change.
  Tensor copy = value.clone();
  return graph.add_node(OpKind::constant, {}, ConstantAttrs{copy}, copy.dtype(), copy.shape());
}

Value full(Graph& graph, double value, DType dtype, const Shape& shape) {
  detail::check_dims(shape, "full");
  Value scalar = constant(graph, Tensor::scalar(dtype, value));
  Axes no_dims;
  return broadcast_in_dim(scalar, shape, no_dims);
}

Value zeros_like(Value x) {
  detail::check_operands({x}, "zeros_like");
  return full(x.graph(), 0.0, x.dtype(), x.shape());
}

Value ones_like(Value x) {
  detail::check_operands({x}, "ones_like");
  return full(x.graph(), 1.0, x.dtype(), x.shape());
}

Value scalar_like(Value x, double value) {
  detail::check_operands({x}, "scalar_like");
  return constant(x.graph(), Tensor::scalar(x.dtype(), value));
}

Value iota(Graph& graph, DType dtype, const Shape& shape, int64_t dim) {
  detail::check_dims(shape, "iota");
  check(dtype != DType::boolean, "iota", "needs a numeric dtype, got bool");
  int64_t axis = normalize_axis(dim, static_cast<int64_t>(shape.size()), "iota");
  return graph.add_node(OpKind::iota, {}, IotaAttrs{axis}, dtype, shape);
}

Value random_bits(Value seed, Value offset, const Shape& shape, uint32_t stream) {
  detail::check_operands({seed, offset}, "random_bits");
  check(seed.dtype() == DType::i64 && seed.rank() == 0, "random_bits",
        "seed must be an i64 scalar, got ", detail::type_str(seed));
  detail::check_dims(shape, "random_bits");
  detail::check_random_offset(offset, shape, "random_bits");
  return seed.graph().add_node(OpKind::random_bits, {seed, offset}, RandomBitsAttrs{stream},
                               DType::u32, shape);
}

}  // namespace kiln
