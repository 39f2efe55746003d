// Multi-head scaled dot-product attention as transformers' eager path computes it.
#pragma once

#include <cstdint>

#include "kiln/nn/dropout.h"

namespace kiln {

// [batch, seq] of 1/0 -> additive [batch, 1, 1, seq] of `dtype`: 0 where attended, finfo.min on
// padding keys, as transformers' encoders extend their attention mask.
Value extended_attention_mask(Value attention_mask, DType dtype);

// q, k, v [batch, seq, heads * head_size] (projections done), mask additive [batch, 1, 1, seq]
// (or any shape that fits [batch, heads, seq, seq]) -> [batch, seq, heads * head_size]:
// softmax(q k^T * scale + mask) with dropout on the probabilities, times v, heads merged back.
// One attention op in training and evaluation: its dropout (one stream of `dropout`) is drawn
// inside it, so neither the probabilities nor their mask are kept for the backward pass.
Value multi_head_attention(Value q, Value k, Value v, Value mask, int64_t heads, double scale,
                           double dropout_rate, DropoutContext& dropout);

// [batch, seq, heads * head_size] -> [batch, heads, seq, head_size], and back.
Value split_heads(Value x, int64_t heads);
Value merge_heads(Value x);

// A bool `allowed` (true where a query may attend a key; of a shape that broadcasts to the
// scores) -> the additive mask of `dtype`: 0 where allowed, finfo.min elsewhere, as transformers'
// causal decoders build theirs.
Value additive_attention_mask(Value allowed, DType dtype);

}  // namespace kiln
