// Buffer planning: where every value of a Program lives while it runs. Only what a kernel writes
// for later kernels gets memory (values inside a fused kernel never do); reshapes share their
// operand's bytes; outputs get tensors of their own, or the bytes of the argument donated to them;
// everything else is an offset in one arena, planned from liveness together with each kernel's
// scratch, so that its size is known at compile time. Views (views.h) share their root's bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/compiler/program.h"

namespace kiln {

// A buffer written at step `first` and last read at step `last` (inclusive, first <= last).
struct BufferRequest {
  int64_t bytes = 0;
  int32_t first = 0;
  int32_t last = 0;
};

struct MemoryPlan {
  std::vector<BufferRequest> buffers;
  std::vector<int64_t> offsets;  // one per buffer, multiples of the alignment
  int64_t arena_bytes = 0;       // every buffer lies in [0, arena_bytes)
};

// Greedy by size (as TFLite's and XLA's heap simulators in their simplest form): the largest
// buffers are placed first, each at the lowest aligned offset that overlaps no placed buffer with
// an intersecting lifetime.
MemoryPlan plan_memory(std::vector<BufferRequest> buffers, int64_t alignment = 64);

// Where the bytes of a root value live during a run.
enum class BufferHome : uint8_t {
  none,      // nobody reads it: computed inside a kernel only
  argument,  // an input: the caller's tensor
  constant,  // the module's constant tensor
  output,    // a fresh output tensor per run
  donated,   // the argument donated to the output it is
  arena,     // an offset in the arena
};

struct ProgramBuffers {
  std::vector<int32_t> root;       // per node: the node whose buffer it is (views alias)
  std::vector<int64_t> root_offset;  // per node: where its value starts in the root's buffer
  std::vector<BufferHome> home;    // per node (meaningful for roots)
  std::vector<int64_t> offset;     // per node in the arena: its byte offset
  std::vector<int32_t> argument;   // per donated node: the index of the argument it overwrites
  std::vector<int32_t> output;     // per node with home output or donated: its output index
  std::vector<int64_t> scratch_offset;  // per kernel, in the arena
  MemoryPlan plan;                 // the arena's buffers: results in kernel order, then scratch
};

// The nodes a kernel group writes to memory: the node of a single kernel, the results of others.
std::vector<int32_t> written_nodes(const KernelGroup& group);

// Plans `program` (its kernels in execution order, its donations honoured) with
// `scratch_bytes[k]` bytes of scratch for kernel k.
ProgramBuffers plan_buffers(const Program& program, const std::vector<int64_t>& scratch_bytes,
                            int64_t alignment = 64);

}  // namespace kiln
