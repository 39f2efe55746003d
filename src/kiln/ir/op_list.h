// The op set, as one list: names, enum, dispatch tables and counts are generated from it.
//
// X(name, category, gradient). Categories:
//   source     no operands (input, constant, iota) or only key operands (random_bits)
//   unary      elementwise, one operand, output dtype = operand dtype
//   binary     elementwise, two operands of equal shape and dtype (builders broadcast first)
//   structural layout and data movement, reductions, contractions, gathers
//   composite  carries a decomposition into core ops (its gradient and its test oracle)
//   collective combines the values of every replica of a data-parallel program: a barrier that
//              passes never fold, fuse or reorder among collectives (every replica must meet
//              the same collectives in the same order)
// Gradient: vjp = a VJP rule beside the builder (softmax's, layer_norm's, gelu's, cross_entropy's,
// attention's and dropout's beside their decompositions); novjp = none (sources, integer/bool
// results, and the other composites, which autodiff differentiates through their decomposition).
#pragma once

#define KILN_OPS(X)               \
  X(input, source, novjp)         \
  X(constant, source, novjp)      \
  X(iota, source, novjp)          \
  X(random_bits, source, novjp)   \
  X(neg, unary, vjp)              \
  X(abs, unary, vjp)              \
  X(sign, unary, vjp)             \
  X(exp, unary, vjp)              \
  X(log, unary, vjp)              \
  X(tanh, unary, vjp)             \
  X(logistic, unary, vjp)         \
  X(sqrt, unary, vjp)             \
  X(rsqrt, unary, vjp)            \
  X(erf, unary, vjp)              \
  X(logical_not, unary, novjp)    \
  X(add, binary, vjp)             \
  X(sub, binary, vjp)             \
  X(mul, binary, vjp)             \
  X(div, binary, vjp)             \
  X(max, binary, vjp)             \
  X(min, binary, vjp)             \
  X(pow, binary, vjp)             \
  X(logical_and, binary, novjp)   \
  X(logical_or, binary, novjp)    \
  X(compare, structural, novjp)   \
  X(select, structural, vjp)      \
  X(cast, structural, vjp)        \
  X(broadcast, structural, vjp)   \
  X(reshape, structural, vjp)     \
  X(transpose, structural, vjp)   \
  X(slice, structural, vjp)       \
  X(concat, structural, vjp)      \
  X(pad, structural, vjp)         \
  X(reduce_sum, structural, vjp)  \
  X(reduce_max, structural, vjp)  \
  X(dot_general, structural, vjp) \
  X(gather, structural, vjp)      \
  X(scatter_add, structural, vjp) \
  X(softmax, composite, vjp)      \
  X(log_softmax, composite, novjp)\
  X(layer_norm, composite, vjp)   \
  X(layer_norm_grads, composite, novjp) \
  X(gelu, composite, vjp)         \
  X(gelu_grad, composite, novjp)  \
  X(cross_entropy, composite, vjp)\
  X(attention, composite, vjp)    \
  X(attention_grad, composite, novjp) \
  X(dropout, composite, vjp)      \
  X(all_reduce, collective, vjp)
