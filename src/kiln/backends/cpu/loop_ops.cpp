// The typed instructions of loop programs (loop_ops.inc) in the variant of the instruction set the
// kernels use (isa_variants.h): each function here returns its variant's.
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <limits>
#include <string_view>
#include <type_traits>

#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/backends/cpu/loop_program.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/backends/cpu/vector_math.h"
#include "kiln/ir/op_registry.h"

#define KILN_ISA_BODY "kiln/backends/cpu/loop_ops.inc"
#include "kiln/backends/cpu/isa_variants.inc"

namespace kiln::cpu {

InstrFn load_instr(DType dtype) { return KILN_ISA_DISPATCH(load_instr(dtype)); }

InstrFn store_instr(DType dtype) { return KILN_ISA_DISPATCH(store_instr(dtype)); }

InstrFn store_rounded_instr(DType through) {
  return KILN_ISA_DISPATCH(store_rounded_instr(through));
}

InstrFn compute_instr(const Graph& graph, const Node& node) {
  return KILN_ISA_DISPATCH(compute_instr(graph, node));
}

InstrFn select_scalar_instr(DType dtype) { return KILN_ISA_DISPATCH(select_scalar_instr(dtype)); }

InstrFn binary_scalar_instr(const Node& node, ScalarOperand scalar) {
  return KILN_ISA_DISPATCH(binary_scalar_instr(node, scalar));
}

InstrFn reduce_instr(const Node& node) { return KILN_ISA_DISPATCH(reduce_instr(node)); }

CombineFn reduce_combine(const Node& node) { return KILN_ISA_DISPATCH(reduce_combine(node)); }

InstrFn column_sum_instr(const Node& node) { return KILN_ISA_DISPATCH(column_sum_instr(node)); }

CombineFn column_sum_combine(const Node& node) {
  return KILN_ISA_DISPATCH(column_sum_combine(node));
}

}  // namespace kiln::cpu
