// Which kernel maker runs each op on the CPU.
#include "kiln/backends/cpu/kernel.h"

#include "kiln/ir/op_registry.h"

namespace kiln::cpu {

KernelMaker kernel_maker(OpKind kind) {
  switch (kind) {
    case OpKind::broadcast: return make_broadcast;
    case OpKind::transpose: return make_transpose;
    case OpKind::slice: return make_slice;
    case OpKind::concat: return make_concat;
    case OpKind::pad: return make_pad;
    case OpKind::reduce_sum: return make_reduce_sum;
    case OpKind::reduce_max: return make_reduce_max;
    case OpKind::dot_general: return make_dot_general;
    case OpKind::gather: return make_gather;
    case OpKind::scatter_add: return make_scatter_add;
    case OpKind::softmax: return make_softmax;
    case OpKind::log_softmax: return make_log_softmax;
    case OpKind::layer_norm: return make_layer_norm;
    case OpKind::layer_norm_grads: return make_layer_norm_grads;
    case OpKind::cross_entropy: return make_cross_entropy;
    case OpKind::attention: return make_attention;
    case OpKind::attention_grad: return make_attention_grad;
    case OpKind::all_reduce: return make_all_reduce;
    // No kernel: buffers of their own (input, constant) or an alias (reshape).
    case OpKind::input: case OpKind::constant: case OpKind::reshape:
      return nullptr;
    default:  // elementwise and the computed sources iota and random_bits: loop kernels
      return nullptr;
  }
}

bool runs_in_loops(OpKind kind) {
  OpCategory category = op_info(kind).category;
  return category == OpCategory::unary || category == OpCategory::binary ||
         kind == OpKind::compare || kind == OpKind::select || kind == OpKind::cast ||
         kind == OpKind::random_bits || kind == OpKind::iota || kind == OpKind::gelu ||
         kind == OpKind::gelu_grad ||
         kind == OpKind::dropout;
}

}  // namespace kiln::cpu
