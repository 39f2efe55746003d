// The question-answering and masked-LM heads on BertModel, op for op as modeling_bert.py.
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

BertQuestionAnswering bert_for_question_answering(Graph& graph, const BertConfig& config,
                                                  const BertBuildOptions& options) {
  bert_config_check(config, "bert");
  check(config.num_labels() == 2, "bert", "BertForQuestionAnswering needs num_labels 2 (start "
        "and end logits), not ", config.num_labels());
  BertQuestionAnswering model(graph, options.dtype);
  model.inputs = bert_inputs(graph, options);
  std::tie(model.start_positions, model.end_positions) = span_positions(graph, options);
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  BertOutputs bert = bert_model(config, model.inputs, model.params, model.dropout, "bert",
                                /*add_pooling_layer=*/false);
  Linear qa_outputs = Linear::create(model.params, "qa_outputs", config.hidden_size, 2,
                                     config.initializer_range);
  Value logits = qa_outputs(bert.sequence_output);
  model.start_logits = last_axis_slice(logits, 0);
  model.end_logits = last_axis_slice(logits, 1);
  if (!options.with_labels) return model;

  model.loss = span_loss(model.start_logits, model.end_logits, model.start_positions,
                         model.end_positions);
  return model;
}

BertMaskedLM bert_for_masked_lm(Graph& graph, const BertConfig& config,
                                const BertBuildOptions& options) {
  bert_config_check(config, "bert");
  BertMaskedLM model(graph, options.dtype);
  model.inputs = bert_inputs(graph, options);
  MaskedLmLabels labels = masked_lm_labels(graph, options);
  model.labels = labels.labels;
  model.masked_positions = labels.masked_positions;
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  BertOutputs bert = bert_model(config, model.inputs, model.params, model.dropout, "bert",
                                /*add_pooling_layer=*/false);
  const int64_t hidden = config.hidden_size;
  // HF's order: a module's own parameters (the bias) before its submodules'.
  Value bias = model.params.add("cls.predictions.bias", {config.vocab_size},
                                ParameterInit::zeros(), /*decay=*/false);
  Linear transform = Linear::create(model.params, "cls.predictions.transform.dense", hidden,
                                    hidden, config.initializer_range);
  LayerNorm norm = LayerNorm::create(model.params, "cls.predictions.transform.LayerNorm", hidden,
                                     config.layer_norm_eps);
  Value sequence = masked_lm_rows(bert.sequence_output, model.masked_positions);
  Value states = norm(activation(transform(sequence), config.hidden_act));
  Linear decoder;
  decoder.weight = model.params.get("bert.embeddings.word_embeddings.weight").value;
  decoder.bias = bias;
  model.logits = decoder(states);
  if (!options.with_labels) return model;
  model.loss = token_cross_entropy(model.logits, model.labels, options.label_smoothing);
  return model;
}

}  // namespace kiln
