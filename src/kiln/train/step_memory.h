// The memory a training step needs on each device, planned before it runs (the buffer plan's
// arena, the state's buffers): what `kiln train` logs before training and `kiln bench` reports
// beside the measured peak RSS. The split: the weights, their gradients and the
// optimizer's slots (16 B per parameter with fp32 AdamW) are fixed; the rest is activations and
// workspace, what --gradient_checkpointing shrinks.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/train/train_step.h"

namespace kiln {

struct StepMemory {
  int64_t parameters = 0;      // scalar weights
  int64_t state_bytes = 0;     // weights and optimizer slots, held for the whole run
  int64_t gradient_bytes = 0;  // one gradient per weight, all in the arena before the optimizer
  int64_t arena_bytes = 0;     // the update program's arena: gradients, activations, workspace

  int64_t fixed_bytes() const { return state_bytes + gradient_bytes; }
  // The arena less the gradients it holds before the optimizer: activations and workspace (at
  // least; where the arena peaks some gradients may not be made yet).
  int64_t activation_bytes() const;
  int64_t peak_bytes() const { return state_bytes + arena_bytes; }
};

// `step`'s update program (compiled now if not yet) and `state`'s buffers, per replica.
StepMemory step_memory(TrainStep& step, const TrainState& state);

// "memory plan: weights, gradients and optimizer state 16 B/param = X MiB, activations and
// workspace Y MiB, planned peak Z MiB" (per device), or the state alone for a backend that plans
// no arena.
std::string step_memory_line(const StepMemory& memory);

}  // namespace kiln
