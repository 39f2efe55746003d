// DistilBertModel (embeddings, post-LN transformer blocks) and the sequence-classification head,
// op for op as transformers' modeling_distilbert.py with eager attention.
#include "kiln/models/distilbert.h"

#include <cmath>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/nn/activation.h"
#include "kiln/nn/attention.h"
#include "kiln/nn/layers.h"

namespace kiln {
namespace {

Value embeddings(const DistilBertConfig& config, const DistilBertInputs& inputs,
                 ParameterSet& params, DropoutContext& dropout, const std::string& prefix) {
  const int64_t dim = config.dim, seq = inputs.input_ids.dim(1);
  const double init_std = config.initializer_range;
  Embedding word = Embedding::create(params, prefixed(prefix, "word_embeddings"),
                                     config.vocab_size, dim, init_std, config.pad_token_id);
  // Sinusoidal position embeddings differ only in their initial values: transformers 4 froze
  // them, transformers 5 trains them as Kiln does.
  Embedding position =
      config.sinusoidal_pos_embds
          ? Embedding{params.add(prefixed(prefix, "position_embeddings.weight"),
                                 {config.max_position_embeddings, dim},
                                 ParameterInit::sinusoidal(), /*decay=*/true)}
          : Embedding::create(params, prefixed(prefix, "position_embeddings"),
                              config.max_position_embeddings, dim, init_std);
  LayerNorm norm =
      LayerNorm::create(params, prefixed(prefix, "LayerNorm"), dim, kDistilBertLayerNormEps);
  check(seq <= config.max_position_embeddings, "distilbert", "sequence length ", seq,
        " exceeds max_position_embeddings ", config.max_position_embeddings);
  // position_ids = arange(seq): the first seq rows, taken by a slice rather than a gather.
  Value x = word(inputs.input_ids) + slice(position.weight, {0, 0}, {seq, dim});
  return dropout(norm(x), config.dropout);
}

// TransformerBlock: self-attention, residual and sa_layer_norm (no dropout on the attention's
// output, unlike BERT), then the FFN with dropout on its output, residual and output_layer_norm.
Value transformer_block(const DistilBertConfig& config, Value x, Value mask, ParameterSet& params,
                        DropoutContext& dropout, const std::string& prefix) {
  const int64_t dim = config.dim;
  auto linear = [&](const std::string& name, int64_t in, int64_t out) {
    return Linear::create(params, prefixed(prefix, name), in, out, config.initializer_range);
  };
  auto layer_norm = [&](const std::string& name) {
    return LayerNorm::create(params, prefixed(prefix, name), dim, kDistilBertLayerNormEps);
  };
  Linear query = linear("attention.q_lin", dim, dim);
  Linear key = linear("attention.k_lin", dim, dim);
  Linear value = linear("attention.v_lin", dim, dim);
  Linear attention_out = linear("attention.out_lin", dim, dim);
  LayerNorm attention_norm = layer_norm("sa_layer_norm");
  Linear lin1 = linear("ffn.lin1", dim, config.hidden_dim);
  Linear lin2 = linear("ffn.lin2", config.hidden_dim, dim);
  LayerNorm output_norm = layer_norm("output_layer_norm");

  const double scale = 1.0 / std::sqrt(static_cast<double>(config.head_size()));
  Value context = multi_head_attention(query(x), key(x), value(x), mask, config.n_heads, scale,
                                       config.attention_dropout, dropout);
  Value attended = attention_norm(attention_out(context) + x);
  Value ffn = dropout(lin2(activation(lin1(attended), config.activation)), config.dropout);
  return output_norm(ffn + attended);
}

}  // namespace

DistilBertInputs distilbert_inputs(Graph& graph, const BertBuildOptions& options) {
  return DistilBertInputs{token_input(graph, "input_ids", options),
                          token_input(graph, "attention_mask", options)};
}

Value distilbert_model(const DistilBertConfig& config, const DistilBertInputs& inputs,
                       ParameterSet& params, DropoutContext& dropout, const std::string& prefix) {
  distilbert_config_check(config, "distilbert");
  Value x = embeddings(config, inputs, params, dropout, prefixed(prefix, "embeddings"));
  Value mask = extended_attention_mask(inputs.attention_mask, params.dtype());
  for (int64_t i = 0; i < config.n_layers; ++i) {
    LayerMarkScope layer(x.graph(), static_cast<int32_t>(i));  // for --gradient_checkpointing
    x = transformer_block(config, x, mask, params, dropout,
                          prefixed(prefix, "transformer.layer." + std::to_string(i)));
  }
  return x;
}

DistilBertClassifier distilbert_for_sequence_classification(Graph& graph,
                                                            const DistilBertConfig& config,
                                                            const BertBuildOptions& options) {
  distilbert_config_check(config, "distilbert");
  const int64_t labels_count = config.num_labels();
  DistilBertClassifier model(graph, options.dtype);
  model.inputs = distilbert_inputs(graph, options);
  model.problem_type =
      classification_problem_type(config.problem_type, labels_count, options.integer_labels);
  if (options.with_labels) {
    model.labels = sequence_classification_labels(graph, model.problem_type, labels_count, options);
  }
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value hidden = distilbert_model(config, model.inputs, model.params, model.dropout);
  Linear pre_classifier = Linear::create(model.params, "pre_classifier", config.dim, config.dim,
                                         config.initializer_range);
  Linear classifier = Linear::create(model.params, "classifier", config.dim, labels_count,
                                     config.initializer_range);
  Value pooled = activation(pre_classifier(first_token(hidden)), "relu");
  model.logits = classifier(model.dropout(pooled, config.seq_classif_dropout));
  if (!options.with_labels) return model;
  model.loss = sequence_classification_loss(model.logits, model.labels, model.problem_type,
                                            model.inputs.attention_mask, options.label_smoothing);
  return model;
}

}  // namespace kiln
