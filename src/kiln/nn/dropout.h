// Dropout sites of one forward pass: each draws its own Philox stream of one seed and the offset
// keys, which are graph inputs so that every training step reuses one compiled program. Keys come
// one per example (every site's tensor has the batch as its leading dim), so that an example's
// masks depend on its own key only, however the batch is split among replicas.
#pragma once

#include <cstdint>

#include "kiln/ir/ops.h"

namespace kiln {

class DropoutContext {
 public:
  // Evaluation: every site is the identity.
  DropoutContext() = default;
  // Training: `seed` an i64 scalar, `offset` an i64 scalar or an i64 vector of one key per row
  // of every site's leading dim (usually inputs; see the dropout op).
  DropoutContext(Value seed, Value offset) : seed_(seed), offset_(offset) {}
  // Training, with new inputs of `graph`: "dropout_seed" (i64 scalar) and "dropout_offset" (i64
  // [batch_size], one key per example: see dropout_row_keys in kiln/train/dropout_keys.h).
  static DropoutContext with_inputs(Graph& graph, int64_t batch_size);

  bool training() const { return seed_.valid(); }
  Value seed() const { return seed_; }
  Value offset() const { return offset_; }
  // Streams handed out so far.
  uint32_t sites() const { return next_stream_; }

  // Dropout of x at the next site; the identity when not training. Every call takes a stream,
  // whatever its rate, so a site keeps its stream when another site's rate changes.
  Value operator()(Value x, double rate);
  // The next site for an op that drops inside itself (attention): its keys and stream, rate 0
  // when not training. Takes a stream as operator() does.
  AttentionDropout attention_site(double rate);

 private:
  Value seed_, offset_;
  uint32_t next_stream_ = 0;
};

}  // namespace kiln
