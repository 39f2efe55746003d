// The passes of the pipeline, one file each. A pass reads a module and returns an equivalent one
// (same inputs in the same order, same output values up to the rounding the pass documents).
#pragma once

#include <vector>

#include "kiln/compiler/options.h"
#include "kiln/compiler/program.h"

namespace kiln {

// Keeps the nodes the outputs depend on (and every input).
Module eliminate_dead_code(const Module& module);

// Replaces composites the backend has no kernel for (all of them with
// options.decompose_composites) by their decompositions.
Module decompose_composites(const Module& module, const BackendCapabilities& capabilities,
                            const CompileOptions& options);

// Merges nodes with the same op, operands, attributes, dtype and shape (constants: the same
// bytes; random_bits: the same key operands and stream). Inputs are never merged.
Module eliminate_common_subexpressions(const Module& module);

// Gradient checkpointing (checkpoint.cpp): every backward-pass node (layer_mark::backward) reads,
// instead of a value computed inside a layer, a copy recomputed from the layer's input (marked
// layer_mark::recomputed and built just before it); values a layer hands on stay as they are.
// Runs after cse, which would merge each copy back into the value it copies.
Module recompute_layers(const Module& module);

// Replaces nodes whose operands are all constants or iota (or broadcasts of them) by constants
// computed with the reference kernels; leaves random bits, dropout, iota, broadcasts, collectives
// and large results alone.
Module fold_constants(const Module& module);

// Algebraic identities: x*1, x/1, x+0, x-0, neg(neg x), casts to the same dtype or through a
// lossless one, broadcasts/reshapes/transposes that do nothing or compose, selects on a constant
// predicate or between equal branches, reductions over dims of size 1; with
// `fold_transposes_into_dots`, a dot_general reading a transpose (or casts of one) reads its
// operand with renumbered dims. Exact, but for the sign of a zero: x + 0 and x - (-0) keep x's.
Module simplify(const Module& module, bool fold_transposes_into_dots);

// Mixed precision (CompileOptions::bf16): every f32 dot_general reads bf16 casts of its operands
// and accumulates into its f32 result; everything else (parameters, optimizer state, softmax,
// layer norm, the loss) stays as it is. Decompose attention first to reach its inner products.
// Without `bf16_products` (BackendCapabilities), the operands are bf16-rounded f32 values instead:
// casts to bf16 and back, which simplify keeps (the round trip is lossy) and fusion puts in the
// loops of their producers.
Module use_bf16_matmuls(const Module& module, bool bf16_products);

// One group per node that needs a kernel (no fusion), in module order.
std::vector<KernelGroup> single_node_kernels(const Module& module);

// Fused kernel groups (fusion.cpp): loop groups where capabilities.loop_fusion, gemm groups with
// epilogues where capabilities.gemm_epilogues, single kernels for the rest; in an order that
// respects the data flow.
std::vector<KernelGroup> fuse_kernels(const Module& module, const BackendCapabilities& capabilities);

// Orders `kernels` (any order the data flow allows on entry) so that every donated argument is
// read by its other readers before it is overwritten; returns the donations that are safe so
// (schedule.cpp).
std::vector<Donation> schedule_kernels(const Module& module, std::vector<KernelGroup>& kernels,
                                       const std::vector<Donation>& donations);

}  // namespace kiln
