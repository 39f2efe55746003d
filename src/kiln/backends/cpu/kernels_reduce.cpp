// The CPU kernels of reduce_sum and reduce_max (kernels_reduce.inc) in the variant of the
// instruction set the kernels use (isa_variants.h).
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/strided_copy.h"
#include "kiln/backends/cpu/typed.h"

#define KILN_ISA_BODY "kiln/backends/cpu/kernels_reduce.inc"
#include "kiln/backends/cpu/isa_variants.inc"

namespace kiln::cpu {

Kernel make_reduce_sum(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_reduce_sum(graph, id));
}

Kernel make_reduce_max(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_reduce_max(graph, id));
}

}  // namespace kiln::cpu
