// The cached decoding step: GPT-2's blocks on the new positions, attending to the cache.
#include "kiln/models/gpt2_generation.h"

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/nn/attention.h"

namespace kiln {

Shape gpt2_cache_shape(const Gpt2Config& config, const Gpt2DecodeOptions& options) {
  return {config.n_layer, 2, options.batch_size, config.n_head, options.max_length,
          config.head_size()};
}

Gpt2DecodeStep gpt2_decode_step(Graph& graph, const Gpt2Config& config,
                                const Gpt2DecodeOptions& options) {
  const int64_t batch = options.batch_size, count = options.new_tokens;
  const int64_t length = options.max_length;
  check(batch > 0 && count > 0 && count <= length && length <= config.n_positions, "gpt2",
        "decoding ", count, " new tokens of ", batch, " rows with a cache of ", length,
        " positions needs 0 < new tokens <= positions <= n_positions (", config.n_positions, ")");
  Gpt2DecodeStep step(graph, options.dtype);
  step.input_ids = graph.input("input_ids", options.index_dtype, {batch, count});
  step.past_length = graph.input("past_length", DType::i64, {});
  const Shape cache_shape = gpt2_cache_shape(config, options);
  step.past_key_values = graph.input("past_key_values", options.dtype, cache_shape);
  Gpt2Weights weights = gpt2_weights(config, step.params, "transformer");

  // The new tokens' positions past_length + i; key j is visible to new token i when j <= its
  // position (the cache before it, and the new tokens up to it).
  Value offset = broadcast_to(step.past_length, {count});
  Value positions = iota(graph, DType::i64, {count}, 0) + offset;
  Value key_positions = iota(graph, DType::i64, {count, length}, 1);
  Value query_positions = broadcast_in_dim(positions, {count, length}, {0});
  Value mask = reshape(additive_attention_mask(le(key_positions, query_positions), options.dtype),
                       {1, 1, count, length});
  // Cache position j takes new token j - past_length when that is one of them: a gather of the
  // new tokens (index 0 elsewhere), then a select between it and the past.
  Value cache_positions = iota(graph, DType::i64, {length}, 0);
  Value relative = cache_positions - broadcast_to(step.past_length, {length});
  Value written = logical_and(ge(relative, zeros_like(relative)),
                              lt(relative, full(graph, static_cast<double>(count), DType::i64,
                                                {length})));
  Value source = select(written, relative, zeros_like(relative));
  const Shape layer_shape{batch, config.n_head, length, config.head_size()};
  Value written_cache = broadcast_in_dim(written, layer_shape, {2});

  Value x = weights.wte(step.input_ids) + gather(weights.wpe.weight, positions, 0);
  const double scale = gpt2_attention_scale(config);
  std::vector<Value> layers;
  DropoutContext no_dropout;
  for (int64_t layer = 0; layer < config.n_layer; ++layer) {
    auto cached = [&](int64_t kind) {
      Value part = slice(step.past_key_values, {layer, kind, 0, 0, 0, 0},
                         {layer + 1, kind + 1, batch, config.n_head, length, config.head_size()});
      return reshape(part, layer_shape);
    };
    Gpt2Attend attend = [&](Value query, Value key, Value value) {
      auto update = [&](Value fresh, int64_t kind) {
        Value spread = gather(split_heads(fresh, config.n_head), source, 2);
        return select(written_cache, spread, cached(kind));
      };
      Value keys = update(key, 0), values = update(value, 1);
      Shape stacked{1, 1, batch, config.n_head, length, config.head_size()};
      layers.push_back(concat({reshape(keys, stacked), reshape(values, stacked)}, 1));
      return merge_heads(attention(split_heads(query, config.n_head), keys, values, mask, scale));
    };
    x = gpt2_block(config, weights.h[static_cast<size_t>(layer)], x, attend, no_dropout);
  }
  step.present_key_values = concat(layers, 0);
  Value last = reshape(slice(x, {0, count - 1, 0}, {batch, count, config.n_embd}),
                       {batch, config.n_embd});
  step.logits = gpt2_lm_logits(config, weights.ln_f(last), step.params);
  return step;
}

}  // namespace kiln
