// The Trainer's side of a run in several processes: evaluation batches shared out and their
// outputs gathered back in order, and the all-reduce counters of the end-of-run line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/dist/communicator.h"
#include "kiln/train/task.h"

namespace kiln {

// Whether this process runs batch `batch` of an evaluation (batches are dealt out in turn).
inline bool runs_batch(const dist::Communicator& world, size_t batch) {
  return batch % static_cast<size_t>(world.size()) == static_cast<size_t>(world.rank());
}

// The outputs of all `batches` batches, in order, on every process, from the ones each process
// ran (`mine`, one ForwardOutputs per batch it ran, in order). Losses are summed in batch order,
// so every process (and a single process) adds them alike.
ForwardOutputs gather_batches(dist::Communicator& world, const std::vector<ForwardOutputs>& mine,
                              size_t batches);

// "; all-reduce over N processes: B MB and W ms waited per step" for a run of `steps` steps in
// several processes, or "" for one process.
std::string all_reduce_summary(const dist::Communicator& world, int64_t steps);

}  // namespace kiln
