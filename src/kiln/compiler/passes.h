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
