// The question-answering, token-classification and masked-LM heads on BertModel (or another
// family's encoder), op for op as modeling_bert.py.
#include "kiln/models/bert_heads.h"

#include <tuple>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/nn/activation.h"
#include "kiln/nn/layers.h"
#include "kiln/nn/loss.h"

namespace kiln {

Value last_axis_slice(Value logits, int64_t index) {
  int64_t batch = logits.dim(0), seq = logits.dim(1);
  return reshape(slice(logits, {0, 0, index}, {batch, seq, index + 1}), {batch, seq});
}

std::pair<Value, Value> span_positions(Graph& graph, const BertBuildOptions& options) {
  if (!options.with_labels) return {};
  return {graph.input("start_positions", options.index_dtype, {options.batch_size}),
          graph.input("end_positions", options.index_dtype, {options.batch_size})};
}

Value span_loss(Value start_logits, Value end_logits, Value start_positions,
                Value end_positions) {
  const int64_t seq = start_logits.dim(1);
  // Positions outside the sequence are clamped to `seq`, which the loss ignores.
  auto clamped = [&](Value positions) {
    Graph& graph = positions.graph();
    Value low = full(graph, 0.0, positions.dtype(), positions.shape());
    Value high = full(graph, static_cast<double>(seq), positions.dtype(), positions.shape());
    return min(max(positions, low), high);
  };
  Value start_loss = cross_entropy(start_logits, clamped(start_positions), seq);
  Value end_loss = cross_entropy(end_logits, clamped(end_positions), seq);
  return (start_loss + end_loss) / 2.0;
}

MaskedLmLabels masked_lm_labels(Graph& graph, const BertBuildOptions& options) {
  MaskedLmLabels out;
  const int64_t predictions = options.with_labels ? options.mlm_predictions : 0;
  if (predictions > 0) {
    out.masked_positions = graph.input("masked_positions", options.index_dtype, {predictions});
    out.labels = graph.input("masked_labels", options.index_dtype, {predictions});
  } else if (options.with_labels) {
    out.labels =
        graph.input("labels", options.index_dtype, {options.batch_size, options.seq_len});
  }
  return out;
}

Value masked_lm_rows(Value sequence_output, Value masked_positions) {
  if (!masked_positions.valid()) return sequence_output;
  const Value& x = sequence_output;
  return gather(reshape(x, {x.dim(0) * x.dim(1), x.dim(2)}), masked_positions, 0);
}

Value token_cross_entropy(Value logits, Value labels, double label_smoothing) {
  const int64_t classes = logits.dim(logits.rank() - 1);
  return label_smoothed_cross_entropy(reshape(logits, {logits.numel() / classes, classes}),
                                      reshape(labels, {labels.numel()}), label_smoothing);
}

namespace {

// BertModel without a pooler: the encoder of the heads below.
EncoderBody bert_encoder_body(const BertConfig& config) {
  return [&config](const BertInputs& inputs, ParameterSet& params, DropoutContext& dropout) {
    return bert_model(config, inputs, params, dropout, "bert", /*add_pooling_layer=*/false)
        .sequence_output;
  };
}

}  // namespace

BertQuestionAnswering bert_for_question_answering(Graph& graph, const BertConfig& config,
                                                  const BertBuildOptions& options) {
  bert_config_check(config, "bert");
  return encoder_for_question_answering(graph, config, options, bert_encoder_body(config));
}

BertQuestionAnswering encoder_for_question_answering(Graph& graph, const BertConfig& config,
                                                     const BertBuildOptions& options,
                                                     const EncoderBody& encoder) {
  check(config.num_labels() == 2, "qa_outputs", "question answering needs num_labels 2 (start "
        "and end logits), not ", config.num_labels());
  BertQuestionAnswering model(graph, options.dtype);
  model.inputs = bert_inputs(graph, options);
  std::tie(model.start_positions, model.end_positions) = span_positions(graph, options);
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value sequence = encoder(model.inputs, model.params, model.dropout);
  Linear qa_outputs = Linear::create(model.params, "qa_outputs", config.hidden_size, 2,
                                     config.initializer_range);
  Value logits = qa_outputs(sequence);
  model.start_logits = last_axis_slice(logits, 0);
  model.end_logits = last_axis_slice(logits, 1);
  if (!options.with_labels) return model;
  model.loss = span_loss(model.start_logits, model.end_logits, model.start_positions,
                         model.end_positions);
  return model;
}

BertTokenClassification bert_for_token_classification(Graph& graph, const BertConfig& config,
                                                      const BertBuildOptions& options) {
  bert_config_check(config, "bert");
  return encoder_for_token_classification(graph, config, options, bert_encoder_body(config));
}

BertTokenClassification encoder_for_token_classification(Graph& graph, const BertConfig& config,
                                                         const BertBuildOptions& options,
                                                         const EncoderBody& encoder) {
  BertTokenClassification model(graph, options.dtype);
  model.inputs = bert_inputs(graph, options);
  if (options.with_labels) model.labels = token_input(graph, "labels", options);
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value sequence = encoder(model.inputs, model.params, model.dropout);
  double rate = config.classifier_dropout.value_or(config.hidden_dropout_prob);
  Linear classifier = Linear::create(model.params, "classifier", config.hidden_size,
                                     config.num_labels(), config.initializer_range);
  model.logits = classifier(model.dropout(sequence, rate));
  if (!options.with_labels) return model;
  model.loss = token_cross_entropy(model.logits, model.labels, options.label_smoothing);
  return model;
}

BertMaskedLM bert_for_masked_lm(Graph& graph, const BertConfig& config,
                                const BertBuildOptions& options) {
  bert_config_check(config, "bert");
  const int64_t hidden = config.hidden_size;
  return encoder_for_masked_lm(
      graph, options, bert_encoder_body(config), [&](Value states, ParameterSet& params) {
        // HF's order: a module's own parameters (the bias) before its submodules'.
        Value bias = params.add("cls.predictions.bias", {config.vocab_size},
                                ParameterInit::zeros(), /*decay=*/false);
        Linear transform = Linear::create(params, "cls.predictions.transform.dense", hidden,
                                          hidden, config.initializer_range);
        LayerNorm norm = LayerNorm::create(params, "cls.predictions.transform.LayerNorm", hidden,
                                           config.layer_norm_eps);
        Linear decoder;
        decoder.weight = params.get("bert.embeddings.word_embeddings.weight").value;
        decoder.bias = bias;
        return decoder(norm(activation(transform(states), config.hidden_act)));
      });
}

BertMaskedLM encoder_for_masked_lm(Graph& graph, const BertBuildOptions& options,
                                   const EncoderBody& encoder, const MaskedLmHead& head) {
  BertMaskedLM model(graph, options.dtype);
  model.inputs = bert_inputs(graph, options);
  MaskedLmLabels labels = masked_lm_labels(graph, options);
  model.labels = labels.labels;
  model.masked_positions = labels.masked_positions;
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value sequence = encoder(model.inputs, model.params, model.dropout);
  // Only the rows with a label when masked_positions is given: the same loss for less work.
  model.logits = head(masked_lm_rows(sequence, model.masked_positions), model.params);
  if (!options.with_labels) return model;
  model.loss = token_cross_entropy(model.logits, model.labels, options.label_smoothing);
  return model;
}

}  // namespace kiln
