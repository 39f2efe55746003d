// Internal: the CPU backend's kernels. compile() builds one Kernel per kernel group of the program
// (dtype dispatch, oneDNN primitives and index arithmetic done then); run() only calls them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "kiln/compiler/program.h"
#include "kiln/ir/graph.h"

namespace kiln::cpu {

// The address of every value during one run, indexed by node id of the lowered graph.
struct Buffers {
  std::vector<std::byte*> slot;

  template <typename T>
  T* at(int32_t id) const {
    return reinterpret_cast<T*>(slot[static_cast<size_t>(id)]);
  }
};

// Reads the node's operands and writes its whole result (never in place: planned buffers of
// operands and result are disjoint). `scratch` holds scratch_bytes of planned temporary memory.
using KernelFn = std::function<void(const Buffers& buffers, std::byte* scratch)>;

struct Kernel {
  KernelFn run;
  int64_t scratch_bytes = 0;
  bool compiled = false;  // a loop program run as machine code (loop_code.h)
};

// `bytes` rounded up to whole cache lines: parts of a kernel's scratch each start on one (a tile
// row or a vector that straddles two lines loads slower, and threads' parts share no line).
inline int64_t whole_lines(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Builds the kernel of node `id`; throws Error naming the op for what it cannot run.
using KernelMaker = Kernel (*)(const Graph& graph, int32_t id);

// The kernel maker of an op that is not elementwise, or null for elementwise ops (they run as
// loop kernels), composites the backend runs through their decomposition, and nodes that need no
// kernel (input, constant, reshape).
KernelMaker kernel_maker(OpKind kind);

// Elementwise ops, which run in loop kernels (loop_kernel.cpp), alone or fused: unary, binary,
// compare, select, cast, the computed sources iota and random_bits, and the gelu, gelu_grad and
// dropout composites.
bool runs_in_loops(OpKind kind);

// The kernel of a loop group (or of a single elementwise node): one pass over its index space.
Kernel make_loop_kernel(const Graph& graph, const KernelGroup& group);

// The kernel of a gemm group: a oneDNN matmul with the group's epilogue as post-ops.
Kernel make_gemm_kernel(const Graph& graph, const KernelGroup& group);

// One maker per op family file.
#define KILN_CPU_MAKERS(X)                                                                  \
  X(broadcast) X(transpose) X(slice) X(concat) X(pad) X(reduce_sum) X(reduce_max)           \
  X(dot_general) X(gather) X(scatter_add) X(softmax) X(log_softmax) X(layer_norm)           \
  X(layer_norm_grads) X(cross_entropy) X(attention) X(attention_grad)                      \
  X(all_reduce)
#define KILN_CPU_DECLARE_MAKER(family) Kernel make_##family(const Graph& graph, int32_t id);
KILN_CPU_MAKERS(KILN_CPU_DECLARE_MAKER)
#undef KILN_CPU_DECLARE_MAKER

// The 4 words of each Philox block in [first, first + blocks) of random_bits(seed, offset,
// stream), block after block: words[4 * j + w] is element 4 * (first + j) + w (the loop kernels'
// random_bits and dropout use it).
void philox_blocks(int64_t seed, int64_t offset, uint32_t stream, int64_t first, int64_t blocks,
                   uint32_t* words);

}  // namespace kiln::cpu
