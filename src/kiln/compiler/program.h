// What the compiler hands a backend: the optimised module, its nodes grouped into kernels in
// execution order, and the donations it honours. Backends turn each kernel group into one kernel
// (a library call, a generated or interpreted loop) and lay out buffers with plan_buffers().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/compiler/module.h"

namespace kiln {

// What the compiler needs to know about the backend it compiles for.
struct BackendCapabilities {
  // Composites the backend runs with a kernel of its own; the others are decomposed into core ops.
  std::function<bool(OpKind)> runs_composite;
  // Runs a `loop` group (below) as one kernel.
  bool loop_fusion = false;
  // Runs a `gemm` group (below) as one kernel.
  bool gemm_epilogues = false;
  // dot_general reads operands in place through any strides, so a transpose it reads is better
  // folded into its dims (XLA lays out operands itself, and its CPU dots take bf16 x bf16 -> f32
  // only in the layouts it makes).
  bool dots_read_strided_operands = false;
  // Hands the whole module to a compiler that orders the writes of donated buffers itself (XLA
  // through PJRT): every honoured donation stands, whatever the kernel schedule could make safe.
  bool aliases_donations_itself = false;
  // Multiplies bf16 operands in hardware, faster than f32 ones. Without that (a CPU with neither
  // AVX512-BF16 nor AMX, where oneDNN's bf16 matmuls emulate and run several times slower than
  // f32), the bf16 pass rounds each operand to bf16 and back to f32 and the product runs in f32:
  // the same values (a product of two bf16 values is exact in f32, and sums stay f32) at f32's
  // speed.
  bool bf16_products = true;
};

enum class KernelKind : uint8_t {
  single,  // one node (the last), run by the backend's kernel for its op, after the broadcasts
           // of scalar constants it reads in place (a scatter_add's zero operand)
  loop,    // elementwise nodes over one index space, broadcasts read in place, optionally with
           // reductions over the trailing axes (rows) or sums over the leading ones (columns)
  gemm,    // a dot_general whose result goes through elementwise epilogue nodes (bias, activation)
};

struct KernelGroup {
  KernelKind kind = KernelKind::single;
  std::vector<int32_t> nodes;    // in topological order
  std::vector<int32_t> results;  // the group's nodes read by later groups or by the outputs
};

// How a reduction in a loop group folds its operand's flat index space: over trailing axes, in
// rows of `width` consecutive elements (one result per row), or a sum over leading axes, element i
// into column i % `columns` (bias and layer-norm gradients; at most 2^16 columns). Size-1 dims do
// not count. Both 0 for other nodes, empty operands and other reductions; never both non-zero.
struct LoopReduction {
  int64_t width = 0, columns = 0;
};
LoopReduction loop_reduction(const Graph& graph, const Node& node);

// The buffer of input `input` (index into Graph::inputs()) may be overwritten with output
// `output` (index into the outputs): the caller hands the argument over and reads the new value
// only through the returned output.
struct Donation {
  int32_t input = 0;
  int32_t output = 0;
};

struct Program {
  Module module;
  std::vector<KernelGroup> kernels;  // execution order; inputs and constants need none
  std::vector<Donation> donations;   // the requested donations this program honours
  std::vector<std::string> log;      // one line per pass: "cse: 812 -> 640 nodes"
};

}  // namespace kiln
