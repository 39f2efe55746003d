// Key/value-cached decoding for GPT2LMHeadModel: a graph of static shapes that takes the keys and
// values of the tokens so far (the cache, max_length positions per layer) and computes only the
// new tokens' positions. With new_tokens = the prompt's length and past_length 0 it is the
// prefill; with new_tokens = 1, one decoding step. The logits are those of GPT2LMHeadModel on
// the whole prefix, as transformers' generate() computes them with its cache.
#pragma once

#include <cstdint>

#include "kiln/models/gpt2.h"

namespace kiln {

struct Gpt2DecodeOptions {
  int64_t batch_size = 1;
  int64_t new_tokens = 1;    // tokens per row this step (no padding: every row has them all)
  int64_t max_length = 128;  // the cache's positions: prompt and generated tokens, <= n_positions
  DType index_dtype = DType::i64;
  DType dtype = DType::f32;
};

// Graph inputs, in order: input_ids [batch, new_tokens] of index_dtype, past_length (i64
// scalar: the tokens already in the cache; it plus new_tokens must not exceed max_length),
// past_key_values, then the parameters (GPT2LMHeadModel's).
struct Gpt2DecodeStep {
  Gpt2DecodeStep(Graph& graph, DType dtype) : params(graph, dtype) {}

  Value input_ids;
  Value past_length;
  // [n_layer, 2 (key, value), batch, n_head, max_length, head_size]; positions from past_length
  // on are not read (all zeros for the prefill).
  Value past_key_values;
  Value logits;  // [batch, vocab_size]: the next token's, after the last new token
  // past_key_values with the new tokens' keys and values at positions
  // [past_length, past_length + new_tokens): the next step's past_key_values.
  Value present_key_values;
  ParameterSet params;
};

Gpt2DecodeStep gpt2_decode_step(Graph& graph, const Gpt2Config& config,
                                const Gpt2DecodeOptions& options);

// The shape of past_key_values for `options`.
Shape gpt2_cache_shape(const Gpt2Config& config, const Gpt2DecodeOptions& options);

}  // namespace kiln
