// The question-answering, token-classification and masked-LM heads on BertModel (or another
// family's encoder), op for op as modeling_bert.py.
#include "kiln/models/bert_heads.h"

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/nn/activation.h"
#include "kiln/nn/layers.h"
#include "kiln/nn/loss.h"

namespace kiln {
namespace {

// [batch, seq, 2] -> the [batch, seq] slice `index` of the last axis.
Value last_axis_slice(Value logits, int64_t index) {
  int64_t batch = logits.dim(0), seq = logits.dim(1);
  return reshape(slice(logits, {0, 0, index}, {batch, seq, index + 1}), {batch, seq});
}

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
  const int64_t batch = options.batch_size, seq = options.seq_len;
  if (options.with_labels) {
    model.start_positions = graph.input("start_positions", options.index_dtype, {batch});
    model.end_positions = graph.input("end_positions", options.index_dtype, {batch});
  }
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value sequence = encoder(model.inputs, model.params, model.dropout);
  Linear qa_outputs = Linear::create(model.params, "qa_outputs", config.hidden_size, 2,
                                     config.initializer_range);
  Value logits = qa_outputs(sequence);
  model.start_logits = last_axis_slice(logits, 0);
  model.end_logits = last_axis_slice(logits, 1);
  if (!options.with_labels) return model;

  // Positions outside the sequence are clamped to `seq`, which the loss ignores.
  auto clamped = [&](Value positions) {
    Value low = full(graph, 0.0, positions.dtype(), positions.shape());
    Value high = full(graph, static_cast<double>(seq), positions.dtype(), positions.shape());
    return min(max(positions, low), high);
  };
  Value start_loss = cross_entropy(model.start_logits, clamped(model.start_positions), seq);
  Value end_loss = cross_entropy(model.end_logits, clamped(model.end_positions), seq);
  model.loss = (start_loss + end_loss) / 2.0;
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
  const int64_t batch = options.batch_size, seq = options.seq_len, labels = config.num_labels();
  if (options.with_labels) model.labels = graph.input("labels", options.index_dtype, {batch, seq});
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value sequence = encoder(model.inputs, model.params, model.dropout);
  double rate = config.classifier_dropout.value_or(config.hidden_dropout_prob);
  Linear classifier = Linear::create(model.params, "classifier", config.hidden_size, labels,
                                     config.initializer_range);
  model.logits = classifier(model.dropout(sequence, rate));
  if (!options.with_labels) return model;
  model.loss = label_smoothed_cross_entropy(reshape(model.logits, {batch * seq, labels}),
                                            reshape(model.labels, {batch * seq}),
                                            options.label_smoothing);
  return model;
}

BertMaskedLM bert_for_masked_lm(Graph& graph, const BertConfig& config,
                                const BertBuildOptions& options) {
  bert_config_check(config, "bert");
  const int64_t hidden = config.hidden_size;
  return encoder_for_masked_lm(
      graph, config, options, bert_encoder_body(config), [&](Value states, ParameterSet& params) {
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

BertMaskedLM encoder_for_masked_lm(Graph& graph, const BertConfig& config,
                                   const BertBuildOptions& options, const EncoderBody& encoder,
                                   const MaskedLmHead& head) {
  BertMaskedLM model(graph, options.dtype);
  model.inputs = bert_inputs(graph, options);
  const int64_t batch = options.batch_size, seq = options.seq_len;
  const int64_t predictions = options.with_labels ? options.mlm_predictions : 0;
  if (predictions > 0) {
    model.masked_positions = graph.input("masked_positions", options.index_dtype, {predictions});
    model.labels = graph.input("masked_labels", options.index_dtype, {predictions});
  } else if (options.with_labels) {
    model.labels = graph.input("labels", options.index_dtype, {batch, seq});
  }
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value sequence = encoder(model.inputs, model.params, model.dropout);
  if (predictions > 0) {  // only the rows with a label: the same loss for a fraction of the work
    const int64_t hidden = sequence.dim(2);
    sequence = gather(reshape(sequence, {batch * seq, hidden}), model.masked_positions, 0);
  }
  model.logits = head(sequence, model.params);
  if (!options.with_labels) return model;
  const double smoothing = options.label_smoothing;
  if (predictions > 0) {
    model.loss = label_smoothed_cross_entropy(model.logits, model.labels, smoothing);
  } else {
    model.loss =
        label_smoothed_cross_entropy(reshape(model.logits, {batch * seq, config.vocab_size}),
                                     reshape(model.labels, {batch * seq}), smoothing);
  }
  return model;
}

}  // namespace kiln
