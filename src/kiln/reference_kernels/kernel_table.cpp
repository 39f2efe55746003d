// The dispatch table of the reference kernels, one entry per op of the list.
#include <array>

#include "kiln/ir/error.h"
#include "kiln/reference_kernels/kernels.h"

namespace kiln::reference {
namespace {

using Kernel = Tensor (*)(const Node& node, Operands operands);

#define KILN_KERNEL_ENTRY(name, category, gradient) &kernel_##name,
constexpr std::array<Kernel, kNumOps> kKernels = {KILN_OPS(KILN_KERNEL_ENTRY)};
#undef KILN_KERNEL_ENTRY

}  // namespace

Tensor evaluate_node(const Node& node, int32_t id, Operands operands) {
  Tensor result = kKernels[static_cast<size_t>(node.op)](node, operands);
  check(result.dtype() == node.dtype && result.shape() == node.shape, op_name(node.op),
        "reference kernel of node %", id, " produced ", dtype_name(result.dtype()),
        shape_str(result.shape()), ", expected ", dtype_name(node.dtype), shape_str(node.shape));
  return result;
}

}  // namespace kiln::reference
