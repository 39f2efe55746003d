// Which kernel maker runs each op on the CPU.
#include "kiln/backends/cpu/kernel.h"

namespace kiln::cpu {

KernelMaker kernel_maker(OpKind kind) {
  switch (kind) {
    case OpKind::neg: case OpKind::abs: case OpKind::sign: case OpKind::exp: case OpKind::log:
    case OpKind::tanh: case OpKind::logistic: case OpKind::sqrt: case OpKind::rsqrt:
    case OpKind::erf: case OpKind::logical_not:
      return make_unary;
    case OpKind::add: case OpKind::sub: case OpKind::mul: case OpKind::div: case OpKind::max:
    case OpKind::min: case OpKind::pow: case OpKind::logical_and: case OpKind::logical_or:
      return make_binary;
    case OpKind::compare: return make_compare;
    case OpKind::select: return make_select;
    case OpKind::cast: return make_cast;
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
    case OpKind::iota: return make_iota;
    case OpKind::random_bits: return make_random_bits;
    case OpKind::softmax: return make_softmax;
    case OpKind::log_softmax: return make_log_softmax;
    case OpKind::layer_norm: return make_layer_norm;
    case OpKind::gelu: return make_gelu;
    case OpKind::cross_entropy: return make_cross_entropy;
    case OpKind::dropout: return make_dropout;
    // No kernel: buffers of their own (input, constant), an alias (reshape), or a decomposition
    // whose matrix multiplies are already oneDNN's (attention).
    case OpKind::input: case OpKind::constant: case OpKind::reshape: case OpKind::attention:
      return nullptr;
  }
  return nullptr;
}

}  // namespace kiln::cpu
