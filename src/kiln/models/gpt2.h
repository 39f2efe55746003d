// GPT-2 as transformers' GPT2Model and GPT2LMHeadModel compute it (eager attention): pre-LN blocks
// with a fused query/key/value Conv1D, a causal mask combined with the padding mask, and an LM
// head tied to the token embeddings; a graph with static shapes [batch, seq] and Hugging Face's
// parameter names.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/models/bert.h"
#include "kiln/models/gpt2_config.h"
#include "kiln/nn/dropout.h"
#include "kiln/nn/layers.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {

// Graph inputs of a batch, each [batch, seq] of options.index_dtype. GPT-2's tokenizer gives no
// token_type_ids.
struct Gpt2Inputs {
  Value input_ids;
  Value attention_mask;  // 1 = attend, 0 = padding (right padding: Kiln's collation)
};

Gpt2Inputs gpt2_inputs(Graph& graph, const BertBuildOptions& options);

// One GPT2Block's modules: "h.<i>.ln_1", "h.<i>.attn.c_attn", "h.<i>.attn.c_proj", "h.<i>.ln_2",
// "h.<i>.mlp.c_fc", "h.<i>.mlp.c_proj".
struct Gpt2Block {
  LayerNorm ln_1;
  Conv1D c_attn;  // [n_embd, 3 * n_embd]: query, key and value side by side
  Conv1D attn_proj;
  LayerNorm ln_2;
  Conv1D c_fc;
  Conv1D mlp_proj;
};

// GPT2Model's modules.
struct Gpt2Weights {
  Embedding wte;  // [vocab_size, n_embd]; also the tied LM head's weight
  Embedding wpe;  // [n_positions, n_embd]
  std::vector<Gpt2Block> h;
  LayerNorm ln_f;
};

// Registers GPT2Model's parameters in HF's state-dict order under `prefix` ("transformer"; empty
// for a bare GPT2Model checkpoint), with GPT2PreTrainedModel's init (the projections into the
// residual stream drawn with std initializer_range / sqrt(2 n_layer)).
Gpt2Weights gpt2_weights(const Gpt2Config& config, ParameterSet& params, const std::string& prefix);

// How a block attends: the query, key and value [batch, seq, n_embd] (heads not split) ->
// the attention's output [batch, seq, n_embd] before c_proj.
using Gpt2Attend = std::function<Value(Value query, Value key, Value value)>;

// One pre-LN block: x + dropout(c_proj(attend(c_attn(ln_1(x))))), then
// + dropout(c_proj(act(c_fc(ln_2(.))))), dropouts at resid_pdrop.
Value gpt2_block(const Gpt2Config& config, const Gpt2Block& block, Value x,
                 const Gpt2Attend& attend, DropoutContext& dropout);

// The scale of the attention scores: 1/sqrt(head size) (scale_attn_weights).
double gpt2_attention_scale(const Gpt2Config& config);

// GPT2Model: last_hidden_state [batch, seq, n_embd] (after ln_f), positions arange(seq).
Value gpt2_model(const Gpt2Config& config, const Gpt2Inputs& inputs, ParameterSet& params,
                 DropoutContext& dropout, const std::string& prefix = "transformer");

// The LM head's logits of hidden states [..., n_embd]: against wte (tie_word_embeddings) or the
// parameter lm_head.weight, which this registers when the head is untied.
Value gpt2_lm_logits(const Gpt2Config& config, Value hidden, ParameterSet& params,
                     const std::string& prefix = "transformer");

// A GPT2LMHeadModel graph. Graph inputs, in order: input_ids, attention_mask, labels
// (with_labels; [batch, seq] of index_dtype, -100 where no token is predicted), dropout_seed and
// dropout_offset (training), then the parameters.
struct Gpt2CausalLM {
  Gpt2CausalLM(Graph& graph, DType dtype) : params(graph, dtype) {}

  Gpt2Inputs inputs;
  Value labels;  // invalid without labels
  Value logits;  // [batch, seq, vocab_size]
  // Mean cross entropy of logits[:, :-1] against labels[:, 1:] (shifted inside the model, as
  // GPT2LMHeadModel), -100 ignored; label-smoothed as the Trainer's LabelSmoother with
  // shift_labels. Invalid without labels.
  Value loss;
  ParameterSet params;
  DropoutContext dropout;
};

Gpt2CausalLM gpt2_lm_head_model(Graph& graph, const Gpt2Config& config,
                                const BertBuildOptions& options);

}  // namespace kiln
