// Memory planning: offsets in one arena for buffers with known lifetimes, so that a program
// allocates its intermediates once and two buffers share memory only when never live together.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::cpu {

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

// Greedy by size: the largest buffers are placed first, each at the lowest aligned offset that
// overlaps no placed buffer with an intersecting lifetime.
MemoryPlan plan_memory(std::vector<BufferRequest> buffers, int64_t alignment = 64);

}  // namespace kiln::cpu
