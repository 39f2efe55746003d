// The planned memory of a training step, from its buffers and its update program's arena.
#include "kiln/train/step_memory.h"

#include <algorithm>
#include <cstdio>

namespace kiln {
namespace {

int64_t first_replica_bytes(const BufferMap& buffers) {
  int64_t bytes = 0;
  for (const auto& [name, replicas] : buffers) bytes += replicas.front()->nbytes();
  return bytes;
}

}  // namespace

int64_t StepMemory::activation_bytes() const {
  return std::max<int64_t>(0, arena_bytes - gradient_bytes);
}

StepMemory step_memory(TrainStep& step, const TrainState& state) {
  StepMemory memory;
  for (const auto& [name, replicas] : state.param_buffers()) {
    memory.parameters += shape_numel(replicas.front()->shape());
  }
  memory.gradient_bytes = first_replica_bytes(state.param_buffers());
  memory.state_bytes = memory.gradient_bytes + first_replica_bytes(state.slot_buffers());
  memory.arena_bytes = step.update_arena_bytes();
  return memory;
}

std::string step_memory_line(const StepMemory& memory) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const double per_param = static_cast<double>(memory.fixed_bytes()) /
                           static_cast<double>(std::max<int64_t>(1, memory.parameters));
  char line[256];
  if (memory.arena_bytes == 0) {  // a backend that plans no arena (reference, XLA's own)
    std::snprintf(line, sizeof line,
                  "memory plan: weights and optimizer state %.1f MiB; activations and "
                  "gradients are planned by the backend, not Kiln",
                  static_cast<double>(memory.state_bytes) / kMiB);
    return line;
  }
  std::snprintf(line, sizeof line,
                "memory plan: weights, gradients and optimizer state %.0f B/param = %.1f MiB, "
                "activations and workspace %.1f MiB, planned peak %.1f MiB",
                per_param, static_cast<double>(memory.fixed_bytes()) / kMiB,
                static_cast<double>(memory.activation_bytes()) / kMiB,
                static_cast<double>(memory.peak_bytes()) / kMiB);
  return line;
}

}  // namespace kiln
