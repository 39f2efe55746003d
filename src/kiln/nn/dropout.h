// Dropout sites of one forward pass: each draws its own Philox stream of one (seed, offset) pair,
// which are graph inputs so that every training step reuses one compiled program.
#pragma once

#include <cstdint>

#include "kiln/ir/graph.h"

namespace kiln {

class DropoutContext {
 public:
  // Evaluation: every site is the identity.
  DropoutContext() = default;
  // Training: `seed` and `offset` are i64 scalars (usually inputs; the offset is the step).
  DropoutContext(Value seed, Value offset) : seed_(seed), offset_(offset) {}
  // Training, with new i64 scalar inputs "dropout_seed" and "dropout_offset" of `graph`.
  static DropoutContext with_inputs(Graph& graph);

  bool training() const { return seed_.valid(); }
  Value seed() const { return seed_; }
  Value offset() const { return offset_; }
  // Streams handed out so far.
  uint32_t sites() const { return next_stream_; }

  // Dropout of x at the next site; the identity when not training. Every call takes a stream,
  // whatever its rate, so a site keeps its stream when another site's rate changes.
  Value operator()(Value x, double rate);

 private:
  Value seed_, offset_;
  uint32_t next_stream_ = 0;
};

}  // namespace kiln
