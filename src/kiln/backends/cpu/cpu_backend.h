// The fast CPU backend: matrix multiplies through oneDNN (with fused epilogues), fused loop kernels
// for elementwise ops and trailing reductions, typed and vectorised kernels for the other ops, all
// split across the OpenMP threads, and intermediates in one arena planned at compile time, so
// that run() allocates nothing but its output tensors (donated arguments are written in place).
#pragma once

#include <memory>
#include <optional>

#include "kiln/backends/backend.h"
#include "kiln/compiler/buffer_plan.h"
#include "kiln/dist/communicator.h"

namespace kiln {

struct CpuBackendOptions {
  // Run every composite through its decomposition instead of its direct kernel (for debugging
  // and for testing the decompositions on this backend).
  bool decompose_composites = false;
  // The processes that all_reduce sums over (data parallel across processes, see
  // collectives.h); null: dist::world(). With one process all_reduce is a copy.
  dist::Communicator* communicator = nullptr;
  // Whether --bf16 multiplies in bf16 (true) or rounds operands to bf16 and multiplies in f32
  // (false; BackendCapabilities::bf16_products); unset: bf16 where the CPU has bf16 units
  // (AVX512-BF16 or AMX, as ONEDNN_MAX_CPU_ISA caps them), and then a notice on stderr, once per
  // process, that it has none. Set, for tests of either path on any CPU.
  std::optional<bool> bf16_products = std::nullopt;
};

// What compile() produced, for tests of structure and for the runtime's counters. Executables own
// a copy of the graph they run: the caller's graph may go away after compile(). One run() at a
// time per executable (runs share its arena).
class CpuExecutable : public Executable {
 public:
  // Buffers are the intermediates (steps numbered in execution order); outputs are not in it.
  virtual const MemoryPlan& memory_plan() const = 0;
  // Kernels run per step (inputs, constants and reshapes need none).
  virtual int64_t kernel_count() const = 0;
  // The kernel groups, in execution order, of the program it runs.
  virtual const Program& program() const = 0;
};

std::unique_ptr<Backend> make_cpu_backend(CpuBackendOptions options = {});

}  // namespace kiln
