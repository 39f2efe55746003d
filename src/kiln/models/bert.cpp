// BertModel (embeddings, post-LN encoder layers, pooler) and the sequence-classification head,
// op for op as transformers' modeling_bert.py with eager attention.
#include "kiln/models/bert.h"

#include <cmath>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/nn/activation.h"
#include "kiln/nn/attention.h"
#include "kiln/nn/layers.h"
#include "kiln/nn/loss.h"

namespace kiln {
namespace {

Value encoder_layer(const BertConfig& config, Value x, Value mask, ParameterSet& params,
                    DropoutContext& dropout, const std::string& prefix) {
  int64_t hidden = config.hidden_size, heads = config.num_attention_heads;
  double init_std = config.initializer_range, eps = config.layer_norm_eps;
  auto linear = [&](const std::string& name, int64_t in, int64_t out) {
    return Linear::create(params, prefixed(prefix, name), in, out, init_std);
  };
  Linear query = linear("attention.self.query", hidden, hidden);
  Linear key = linear("attention.self.key", hidden, hidden);
  Linear value = linear("attention.self.value", hidden, hidden);
  Linear attention_out = linear("attention.output.dense", hidden, hidden);
  LayerNorm attention_norm =
      LayerNorm::create(params, prefixed(prefix, "attention.output.LayerNorm"), hidden, eps);
  Linear intermediate = linear("intermediate.dense", hidden, config.intermediate_size);
  Linear output = linear("output.dense", config.intermediate_size, hidden);
  LayerNorm output_norm =
      LayerNorm::create(params, prefixed(prefix, "output.LayerNorm"), hidden, eps);

  double scale = 1.0 / std::sqrt(static_cast<double>(config.head_size()));
  Value context = multi_head_attention(query(x), key(x), value(x), mask, heads, scale,
                                       config.attention_probs_dropout_prob, dropout);
  Value attended = dropout(attention_out(context), config.hidden_dropout_prob);
  attended = attention_norm(attended + x);
  Value inner = activation(intermediate(attended), config.hidden_act);
  Value out = dropout(output(inner), config.hidden_dropout_prob);
  return output_norm(out + attended);
}

// The mean of a loss's elementwise terms ([batch] or [batch, n]) over the real rows of a batch,
// as torch.nn.MSELoss / BCEWithLogitsLoss average them: rows whose attention mask is all zero
// are the padding rows of a short last batch (see collate.h), which a mean must not count.
// With no such row this is the mean of every term.
Value real_rows_mean(Value terms, Value attention_mask) {
  Value real = reduce_max(cast(attention_mask, terms.dtype()), {1});  // [batch]: 1 or 0
  Value weights = terms.rank() == 1 ? real : broadcast_in_dim(real, terms.shape(), {0});
  double per_row = static_cast<double>(terms.numel() / terms.dim(0));
  return reduce_sum(terms * weights) / (reduce_sum(real) * per_row);
}

}  // namespace

std::string prefixed(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

Value first_token(Value sequence_output) {
  const Value& x = sequence_output;
  return reshape(slice(x, {0, 0, 0}, {x.dim(0), 1, x.dim(2)}), {x.dim(0), x.dim(2)});
}

Value token_input(Graph& graph, const std::string& name, const BertBuildOptions& options) {
  check(options.index_dtype == DType::i32 || options.index_dtype == DType::i64, "bert",
        "index dtype must be i32 or i64, not ", dtype_name(options.index_dtype));
  check(options.batch_size > 0 && options.seq_len > 0, "bert", "batch ", options.batch_size,
        " and sequence length ", options.seq_len, " must be positive");
  return graph.input(name, options.index_dtype, {options.batch_size, options.seq_len});
}

BertInputs bert_inputs(Graph& graph, const BertBuildOptions& options) {
  return BertInputs{token_input(graph, "input_ids", options),
                    token_input(graph, "token_type_ids", options),
                    token_input(graph, "attention_mask", options)};
}

BertOutputs bert_model(const BertConfig& config, const BertInputs& inputs, ParameterSet& params,
                       DropoutContext& dropout, const std::string& prefix, bool add_pooling_layer) {
  bert_config_check(config, "bert");
  Value x = bert_embeddings(config, inputs, params, dropout, prefixed(prefix, "embeddings"),
                            config.hidden_size);
  x = bert_encoder(config, x, inputs.attention_mask, params, dropout, prefix);
  BertOutputs out{x, Value()};
  if (add_pooling_layer) out.pooled_output = bert_pooler(config, x, params, prefix);
  return out;
}

Value bert_embeddings(const BertConfig& config, const BertInputs& inputs, ParameterSet& params,
                      DropoutContext& dropout, const std::string& prefix, int64_t width) {
  int64_t seq = inputs.input_ids.dim(1);
  double init_std = config.initializer_range;
  Embedding word = Embedding::create(params, prefixed(prefix, "word_embeddings"),
                                     config.vocab_size, width, init_std, config.pad_token_id);
  Embedding position = Embedding::create(params, prefixed(prefix, "position_embeddings"),
                                         config.max_position_embeddings, width, init_std);
  Embedding token_type = Embedding::create(params, prefixed(prefix, "token_type_embeddings"),
                                           config.type_vocab_size, width, init_std);
  LayerNorm norm =
      LayerNorm::create(params, prefixed(prefix, "LayerNorm"), width, config.layer_norm_eps);
  check(seq <= config.max_position_embeddings, "bert", "sequence length ", seq,
        " exceeds max_position_embeddings ", config.max_position_embeddings);
  // position_ids = arange(seq): the first seq rows, taken by a slice rather than a gather.
  Value positions = slice(position.weight, {0, 0}, {seq, width});
  Value x = word(inputs.input_ids) + token_type(inputs.token_type_ids);
  x = x + positions;
  return dropout(norm(x), config.hidden_dropout_prob);
}

Value bert_encoder(const BertConfig& config, Value embeddings, Value attention_mask,
                   ParameterSet& params, DropoutContext& dropout, const std::string& prefix) {
  Value x = embeddings;
  Value mask = extended_attention_mask(attention_mask, params.dtype());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    LayerMarkScope layer(x.graph(), static_cast<int32_t>(i));  // for --gradient_checkpointing
    x = encoder_layer(config, x, mask, params, dropout,
                      prefixed(prefix, "encoder.layer." + std::to_string(i)));
  }
  return x;
}

Value bert_pooler(const BertConfig& config, Value sequence_output, ParameterSet& params,
                  const std::string& prefix) {
  Linear pooler = Linear::create(params, prefixed(prefix, "pooler.dense"), config.hidden_size,
                                 config.hidden_size, config.initializer_range);
  return tanh(pooler(first_token(sequence_output)));
}

Value sequence_classification_labels(Graph& graph, const std::string& problem_type,
                                     int64_t num_labels, const BertBuildOptions& options) {
  const int64_t batch = options.batch_size;
  if (problem_type == "single_label_classification") {
    return graph.input("labels", options.index_dtype, {batch});
  }
  if (problem_type == "regression" && num_labels == 1) {
    return graph.input("labels", options.dtype, {batch});
  }
  return graph.input("labels", options.dtype, {batch, num_labels});
}

Value sequence_classification_loss(Value logits, Value labels, const std::string& problem,
                                   Value attention_mask, double label_smoothing) {
  check(label_smoothing == 0.0 || problem == "single_label_classification",
        "--label_smoothing_factor", "smooths class labels; this model's problem_type is ", problem);
  if (problem == "regression") {
    // HF squeezes [batch, 1] logits to match [batch] labels.
    Value prediction = logits.dim(1) == 1 ? reshape(logits, {logits.dim(0)}) : logits;
    return real_rows_mean(squared_error(prediction, labels), attention_mask);
  }
  if (problem == "single_label_classification") {
    return label_smoothed_cross_entropy(logits, labels, label_smoothing);
  }
  if (problem == "multi_label_classification") {
    return real_rows_mean(bce_with_logits(logits, labels), attention_mask);
  }
  fail("bert", "unknown problem_type '", problem, "'");
}

BertClassifier bert_for_sequence_classification(Graph& graph, const BertConfig& config,
                                                const BertBuildOptions& options) {
  bert_config_check(config, "bert");
  return encoder_for_sequence_classification(
      graph, config, options,
      [&](const BertInputs& inputs, ParameterSet& params, DropoutContext& dropout) {
        BertOutputs bert = bert_model(config, inputs, params, dropout);
        double rate = config.classifier_dropout.value_or(config.hidden_dropout_prob);
        Linear classifier = Linear::create(params, "classifier", config.hidden_size,
                                           config.num_labels(), config.initializer_range);
        return classifier(dropout(bert.pooled_output, rate));
      });
}

BertClassifier encoder_for_sequence_classification(Graph& graph, const BertConfig& config,
                                                   const BertBuildOptions& options,
                                                   const EncoderBody& body) {
  BertClassifier model(graph, options.dtype);
  model.inputs = bert_inputs(graph, options);
  model.problem_type = problem_type_for(config, options.integer_labels);
  if (options.with_labels) {
    model.labels =
        sequence_classification_labels(graph, model.problem_type, config.num_labels(), options);
  }
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  model.logits = body(model.inputs, model.params, model.dropout);
  if (!options.with_labels) return model;
  model.loss = sequence_classification_loss(model.logits, model.labels, model.problem_type,
                                            model.inputs.attention_mask, options.label_smoothing);
  return model;
}

}  // namespace kiln
