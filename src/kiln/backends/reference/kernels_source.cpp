// Reference kernels of the source ops: input, constant, iota, random_bits.
#include "kiln/backends/reference/kernel_util.h"
#include "kiln/backends/reference/kernels.h"
#include "kiln/ir/philox.h"

namespace kiln::reference {

Tensor kernel_input(const Node&, Operands operands) { return operands[0]; }

// A copy, so that callers writing into a result never change the graph's constant.
Tensor kernel_constant(const Node& node, Operands) {
  return node.attr<ConstantAttrs>().value.clone();
}

Tensor kernel_iota(const Node& node, Operands) {
  auto dim = static_cast<size_t>(node.attr<IotaAttrs>().dim);
  Tensor out(node.dtype, node.shape);
  int64_t stride = dims_product(node.shape, dim + 1, node.shape.size());
  for (int64_t i = 0; i < out.numel(); ++i) store_int(out, i, (i / stride) % node.shape[dim]);
  return out;
}

Tensor kernel_random_bits(const Node& node, Operands operands) {
  int64_t seed = load_int(operands[0], 0);
  int64_t offset = load_int(operands[1], 0);
  uint32_t stream = node.attr<RandomBitsAttrs>().stream;
  if (node.dtype != DType::u32) fail_dtype(node, node.dtype);
  Tensor out(node.dtype, node.shape);
  auto* bits = out.data_as<uint32_t>();
  for (int64_t i = 0; i < out.numel(); ++i) bits[i] = random_bits_at(seed, offset, stream, i);
  return out;
}

}  // namespace kiln::reference
