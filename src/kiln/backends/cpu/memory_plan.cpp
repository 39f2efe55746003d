// Greedy-by-size arena planning (as TFLite's and XLA's heap simulators do in their simplest form).
#include "kiln/backends/cpu/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace kiln::cpu {
namespace {

int64_t align_up(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

bool lifetimes_meet(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

MemoryPlan plan_memory(std::vector<BufferRequest> buffers, int64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) of placed live neighbours
  for (size_t index : order) {
    const BufferRequest& buffer = buffers[index];
    if (buffer.bytes == 0) continue;
    taken.clear();
    for (size_t other : placed) {
      if (lifetimes_meet(buffer, buffers[other])) {
        taken.emplace_back(plan.offsets[other], plan.offsets[other] + buffers[other].bytes);
      }
    }
    std::sort(taken.begin(), taken.end());
    // The first gap, scanning upwards, that holds the buffer.
    int64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (offset + buffer.bytes <= begin) break;
      offset = std::max(offset, align_up(end, alignment));
    }
    plan.offsets[index] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + buffer.bytes);
    placed.push_back(index);
  }
  plan.arena_bytes = align_up(plan.arena_bytes, alignment);
  plan.buffers = std::move(buffers);
  return plan;
}

}  // namespace kiln::cpu
