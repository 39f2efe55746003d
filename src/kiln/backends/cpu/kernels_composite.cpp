// The CPU kernels of softmax, log_softmax, layer_norm and its gradients, and cross_entropy
// (kernels_composite.inc) in the variant of the instruction set the kernels use (isa_variants.h).
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/backends/cpu/vector_math.h"

#define KILN_ISA_BODY "kiln/backends/cpu/kernels_composite.inc"
#include "kiln/backends/cpu/isa_variants.inc"

namespace kiln::cpu {

Kernel make_softmax(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_softmax(graph, id));
}

Kernel make_log_softmax(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_log_softmax(graph, id));
}

Kernel make_layer_norm(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_layer_norm(graph, id));
}

Kernel make_layer_norm_grads(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_layer_norm_grads(graph, id));
}

Kernel make_cross_entropy(const Graph& graph, int32_t id) {
  return KILN_ISA_DISPATCH(make_cross_entropy(graph, id));
}

}  // namespace kiln::cpu
