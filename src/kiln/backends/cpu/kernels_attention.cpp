// The fused attention kernels (kernels_attention.inc) in the variant of the instruction set the
// kernels use (isa_variants.h).
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <concepts>
#include <limits>
#include <utility>
#include <vector>

#include "kiln/backends/cpu/amx_products.h"
#include "kiln/backends/cpu/bf16_block_products.h"
#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/backends/cpu/vector_math.h"

#define KILN_ISA_BODY "kiln/backends/cpu/kernels_attention.inc"
#include "kiln/backends/cpu/isa_variants.inc"

namespace kiln::cpu {

Kernel make_attention(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_attention(graph, id));
}

Kernel make_attention_grad(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_attention_grad(graph, id));
}

}  // namespace kiln::cpu
