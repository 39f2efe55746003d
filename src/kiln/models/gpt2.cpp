// GPT2Model and GPT2LMHeadModel, op for op as transformers' modeling_gpt2.py with eager attention.
#include "kiln/models/gpt2.h"

#include <cmath>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert_heads.h"
#include "kiln/nn/activation.h"
#include "kiln/nn/attention.h"

namespace kiln {
namespace {

// [batch, seq] of 1/0 -> additive [batch, 1, seq, seq]: query i attends key j <= i that is not
// padding (create_causal_mask's eager mask).
Value causal_padding_mask(Value attention_mask, DType dtype) {
  Graph& graph = attention_mask.graph();
  const int64_t batch = attention_mask.dim(0), seq = attention_mask.dim(1);
  const Shape scores{batch, seq, seq};
  Value query = iota(graph, DType::i64, scores, 1), key = iota(graph, DType::i64, scores, 2);
  Value keep = ne(attention_mask, zeros_like(attention_mask));
  Value allowed = logical_and(le(key, query), broadcast_in_dim(keep, scores, {0, 2}));
  return reshape(additive_attention_mask(allowed, dtype), {batch, 1, seq, seq});
}

}  // namespace

Gpt2Inputs gpt2_inputs(Graph& graph, const BertBuildOptions& options) {
  return Gpt2Inputs{token_input(graph, "input_ids", options),
                    token_input(graph, "attention_mask", options)};
}

Gpt2Weights gpt2_weights(const Gpt2Config& config, ParameterSet& params,
                         const std::string& prefix) {
  gpt2_config_check(config, "gpt2");
  const int64_t width = config.n_embd;
  const double std = config.initializer_range;
  const double residual_std = std / std::sqrt(2.0 * static_cast<double>(config.n_layer));
  const double eps = config.layer_norm_epsilon;
  Gpt2Weights weights;
  weights.wte =
      Embedding::create(params, prefixed(prefix, "wte"), config.vocab_size, width, std);
  weights.wpe =
      Embedding::create(params, prefixed(prefix, "wpe"), config.n_positions, width, std);
  for (int64_t i = 0; i < config.n_layer; ++i) {
    const std::string block = prefixed(prefix, "h." + std::to_string(i));
    auto name = [&](const char* module) { return block + "." + module; };
    Gpt2Block layer;
    layer.ln_1 = LayerNorm::create(params, name("ln_1"), width, eps);
    layer.c_attn = Conv1D::create(params, name("attn.c_attn"), width, 3 * width, std);
    layer.attn_proj = Conv1D::create(params, name("attn.c_proj"), width, width, residual_std);
    layer.ln_2 = LayerNorm::create(params, name("ln_2"), width, eps);
    layer.c_fc = Conv1D::create(params, name("mlp.c_fc"), width, config.inner_size(), std);
    layer.mlp_proj =
        Conv1D::create(params, name("mlp.c_proj"), config.inner_size(), width, residual_std);
    weights.h.push_back(layer);
  }
  weights.ln_f = LayerNorm::create(params, prefixed(prefix, "ln_f"), width, eps);
  return weights;
}

Value gpt2_block(const Gpt2Config& config, const Gpt2Block& block, Value x,
                 const Gpt2Attend& attend, DropoutContext& dropout) {
  const int64_t batch = x.dim(0), seq = x.dim(1), width = config.n_embd;
  Value fused = block.c_attn(block.ln_1(x));
  auto part = [&](int64_t index) {
    return slice(fused, {0, 0, index * width}, {batch, seq, (index + 1) * width});
  };
  Value attended = block.attn_proj(attend(part(0), part(1), part(2)));
  x = x + dropout(attended, config.resid_pdrop);
  Value inner = activation(block.c_fc(block.ln_2(x)), config.activation_function);
  return x + dropout(block.mlp_proj(inner), config.resid_pdrop);
}

double gpt2_attention_scale(const Gpt2Config& config) {
  return 1.0 / std::sqrt(static_cast<double>(config.head_size()));
}

Value gpt2_model(const Gpt2Config& config, const Gpt2Inputs& inputs, ParameterSet& params,
                 DropoutContext& dropout, const std::string& prefix) {
  Gpt2Weights weights = gpt2_weights(config, params, prefix);
  const int64_t seq = inputs.input_ids.dim(1);
  check(seq <= config.n_positions, "gpt2", "sequence length ", seq, " exceeds n_positions ",
        config.n_positions);
  // position_ids = arange(seq): the first seq rows of wpe.
  Value positions = slice(weights.wpe.weight, {0, 0}, {seq, config.n_embd});
  Value x = dropout(weights.wte(inputs.input_ids) + positions, config.embd_pdrop);
  Value mask = causal_padding_mask(inputs.attention_mask, params.dtype());
  const double scale = gpt2_attention_scale(config);
  Gpt2Attend attend = [&](Value query, Value key, Value value) {
    return multi_head_attention(query, key, value, mask, config.n_head, scale, config.attn_pdrop,
                                dropout);
  };
  for (size_t i = 0; i < weights.h.size(); ++i) {
    LayerMarkScope layer(x.graph(), static_cast<int32_t>(i));  // for --gradient_checkpointing
    x = gpt2_block(config, weights.h[i], x, attend, dropout);
  }
  return weights.ln_f(x);
}

Value gpt2_lm_logits(const Gpt2Config& config, Value hidden, ParameterSet& params,
                     const std::string& prefix) {
  Linear head;
  head.weight = config.tie_word_embeddings
                    ? params.get(prefixed(prefix, "wte.weight")).value
                    : params.add("lm_head.weight", {config.vocab_size, config.n_embd},
                                 ParameterInit::normal(config.initializer_range), true);
  return head(hidden);
}

Gpt2CausalLM gpt2_lm_head_model(Graph& graph, const Gpt2Config& config,
                                const BertBuildOptions& options) {
  Gpt2CausalLM model(graph, options.dtype);
  model.inputs = gpt2_inputs(graph, options);
  const int64_t batch = options.batch_size, seq = options.seq_len;
  if (options.with_labels) {
    check(seq >= 2, "gpt2", "a causal LM's loss needs sequences of at least 2 tokens, not ", seq);
    model.labels = token_input(graph, "labels", options);
  }
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, batch);
  Value hidden = gpt2_model(config, model.inputs, model.params, model.dropout);
  model.logits = gpt2_lm_logits(config, hidden, model.params);
  if (!options.with_labels) return model;
  // Position t predicts the label of t + 1.
  Value predicting = slice(model.logits, {0, 0, 0}, {batch, seq - 1, config.vocab_size});
  Value next = slice(model.labels, {0, 1}, {batch, seq});
  model.loss = token_cross_entropy(predicting, next, options.label_smoothing);
  return model;
}

}  // namespace kiln
