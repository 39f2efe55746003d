// Reference kernels of the source ops: input, constant, iota, random_bits.
#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"

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
  visit_any(node, out.dtype(), [&]<typename T>() {
    T* o = out.data_as<T>();
    int64_t size = node.shape[dim];
    for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = narrow<T>((i / stride) % size);
  });
  return out;
}

Tensor kernel_random_bits(const Node& node, Operands operands) {
  if (node.dtype != DType::u32) fail_dtype(node, node.dtype);
  Tensor out(DType::u32, node.shape);
  fill_random_bits(load_int(operands[0], 0), operands[1], node.attr<RandomBitsAttrs>().stream,
                   out.data_as<uint32_t>(), node.shape);
  return out;
}

}  // namespace kiln::reference
