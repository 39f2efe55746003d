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
// In evaluation the attention composite computes it; in training the softmax is spelled out so
// that the probabilities go through dropout (one stream).
Value multi_head_attention(Value q, Value k, Value v, Value mask, int64_t heads, double scale,
                           double dropout_rate, DropoutContext& dropout);

}  // namespace kiln
