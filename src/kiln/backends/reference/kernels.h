// Internal: the reference kernels, one per op, declared from the op list; the dispatch table in
// reference_backend.cpp names each one, so an op added to the list without a kernel fails the
// build.
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

}  // namespace kiln::reference
