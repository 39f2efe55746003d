// RobertaModel (RoBERTa's embeddings on BERT's encoder) and its sequence-classification head, op
// for op as transformers' modeling_roberta.py with eager attention.
#include "kiln/models/roberta.h"

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/nn/layers.h"

namespace kiln {
namespace {

// create_position_ids_from_input_ids: pad + (cumsum over the row of id != pad) * (id != pad).
// The cumulative sum is a masked sum over a [batch, seq, seq] triangle, in integers (exact, and
// untouched by the bf16 pass, which rounds floating dots).
Value roberta_position_ids(Value input_ids, int64_t pad) {
  const int64_t batch = input_ids.dim(0), seq = input_ids.dim(1);
  const DType index = input_ids.dtype();
  Graph& graph = input_ids.graph();
  Value real = ne(input_ids, full(graph, static_cast<double>(pad), index, input_ids.shape()));
  Shape cube{batch, seq, seq};  // [row, position i, position j <= i]
  Value earlier = le(iota(graph, index, cube, 2), iota(graph, index, cube, 1));
  Value counted = logical_and(earlier, broadcast_in_dim(real, cube, {0, 2}));
  Value count = reduce_sum(cast(counted, index), {2});
  return count * cast(real, index) + static_cast<double>(pad);
}

// RobertaEmbeddings, its parameters in transformers 5's order (word, token type, LayerNorm,
// position): word + token type + position embeddings, LayerNorm, dropout.
Value roberta_embeddings(const RobertaConfig& config, const BertInputs& inputs,
                         ParameterSet& params, DropoutContext& dropout,
                         const std::string& prefix) {
  const int64_t hidden = config.hidden_size, pad = *config.pad_token_id;
  const double init_std = config.initializer_range;
  Embedding word = Embedding::create(params, prefixed(prefix, "word_embeddings"),
                                     config.vocab_size, hidden, init_std, pad);
  Embedding token_type = Embedding::create(params, prefixed(prefix, "token_type_embeddings"),
                                           config.type_vocab_size, hidden, init_std);
  LayerNorm norm =
      LayerNorm::create(params, prefixed(prefix, "LayerNorm"), hidden, config.layer_norm_eps);
  Embedding position = Embedding::create(params, prefixed(prefix, "position_embeddings"),
                                         config.max_position_embeddings, hidden, init_std, pad);
  const int64_t seq = inputs.input_ids.dim(1);
  check(pad + seq < config.max_position_embeddings, "roberta", "sequence length ", seq,
        " needs position ids up to ", pad + seq, ", beyond max_position_embeddings ",
        config.max_position_embeddings, " (positions start after pad_token_id ", pad, ")");
  Value x = word(inputs.input_ids) + token_type(inputs.token_type_ids);
  x = x + position(roberta_position_ids(inputs.input_ids, pad));
  return dropout(norm(x), config.hidden_dropout_prob);
}

}  // namespace

BertOutputs roberta_model(const RobertaConfig& config, const BertInputs& inputs,
                          ParameterSet& params, DropoutContext& dropout,
                          const std::string& prefix, bool add_pooling_layer) {
  roberta_config_check(config, "roberta");
  Value x = roberta_embeddings(config, inputs, params, dropout, prefixed(prefix, "embeddings"));
  x = bert_encoder(config, x, inputs.attention_mask, params, dropout, prefix);
  BertOutputs out{x, Value()};
  if (add_pooling_layer) out.pooled_output = bert_pooler(config, x, params, prefix);
  return out;
}

BertClassifier roberta_for_sequence_classification(Graph& graph, const RobertaConfig& config,
                                                   const BertBuildOptions& options) {
  roberta_config_check(config, "roberta");
  return encoder_for_sequence_classification(
      graph, config, options,
      [&](const BertInputs& inputs, ParameterSet& params, DropoutContext& dropout) {
        Value sequence = roberta_model(config, inputs, params, dropout, "roberta",
                                       /*add_pooling_layer=*/false).sequence_output;
        return roberta_classification_head(config, sequence, params, dropout, tanh);
      });
}

Value roberta_classification_head(const BertConfig& config, Value sequence_output,
                                  ParameterSet& params, DropoutContext& dropout,
                                  Value (*activation)(Value)) {
  const int64_t hidden = config.hidden_size;
  const double rate = config.classifier_dropout.value_or(config.hidden_dropout_prob);
  Linear dense =
      Linear::create(params, "classifier.dense", hidden, hidden, config.initializer_range);
  Linear out_proj = Linear::create(params, "classifier.out_proj", hidden, config.num_labels(),
                                   config.initializer_range);
  Value x = activation(dense(dropout(first_token(sequence_output), rate)));
  return out_proj(dropout(x, rate));
}

}  // namespace kiln
