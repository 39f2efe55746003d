// The reference kernels: the plain, obviously correct semantics of every op on host tensors, one
// kernel per op, declared from the op list. The reference backend runs them node by node; the
// compiler's constant folding evaluates nodes with them, so that a folded value is exactly what
// the oracle computes. They depend on the IR only (no backend, no compiler), which is why they
// live in a layer of their own below both. The dispatch table in kernel_table.cpp names each one,
// so an op added to the list without a kernel fails the build.
#pragma once

#include <span>

#include "kiln/ir/graph.h"

namespace kiln::reference {

// A kernel's operands are the values of the node's inputs, in order; an input node gets its
// run-time argument as its only operand. Kernels return a new tensor of the node's dtype and
// shape (or an operand itself when nothing changes) and never modify their operands.
using Operands = std::span<const Tensor>;

#define KILN_DECLARE_KERNEL(name, category, gradient) \
  Tensor kernel_##name(const Node& node, Operands operands);
KILN_OPS(KILN_DECLARE_KERNEL)
#undef KILN_DECLARE_KERNEL

// Runs the kernel of `node`'s op. Throws Error naming the node id when the result's dtype or
// shape disagrees with the node's (a kernel that disagrees with its builder's rule is a bug).
Tensor evaluate_node(const Node& node, int32_t id, Operands operands);

}  // namespace kiln::reference
