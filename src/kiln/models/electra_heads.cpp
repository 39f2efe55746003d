// The question-answering, token-classification, generator (masked-LM) and discriminator heads on
// ElectraModel, op for op as modeling_electra.py.
#include "kiln/models/electra_heads.h"

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/models/electra.h"
#include "kiln/nn/activation.h"
#include "kiln/nn/layers.h"
#include "kiln/nn/loss.h"

namespace kiln {
namespace {

EncoderBody electra_encoder_body(const ElectraConfig& config) {
  return [&config](const BertInputs& inputs, ParameterSet& params, DropoutContext& dropout) {
    return electra_model(config, inputs, params, dropout);
  };
}

}  // namespace

BertQuestionAnswering electra_for_question_answering(Graph& graph, const ElectraConfig& config,
                                                     const BertBuildOptions& options) {
  return encoder_for_question_answering(graph, config, options, electra_encoder_body(config));
}

BertTokenClassification electra_for_token_classification(Graph& graph,
                                                         const ElectraConfig& config,
                                                         const BertBuildOptions& options) {
  return encoder_for_token_classification(graph, config, options, electra_encoder_body(config));
}

BertMaskedLM electra_for_masked_lm(Graph& graph, const ElectraConfig& config,
                                   const BertBuildOptions& options) {
  const int64_t hidden = config.hidden_size, width = config.embedding_size;
  return encoder_for_masked_lm(
      graph, options, electra_encoder_body(config),
      [&](Value states, ParameterSet& params) {
        // ElectraGeneratorPredictions registers its LayerNorm before its dense layer.
        LayerNorm norm = LayerNorm::create(params, "generator_predictions.LayerNorm", width,
                                           config.layer_norm_eps);
        Linear dense = Linear::create(params, "generator_predictions.dense", hidden, width,
                                      config.initializer_range);
        Linear decoder;
        decoder.weight = params.get("electra.embeddings.word_embeddings.weight").value;
        decoder.bias = params.add("generator_lm_head.bias", {config.vocab_size},
                                  ParameterInit::zeros(), /*decay=*/false);
        // The generator's activation is gelu (erf) whatever hidden_act says.
        return decoder(norm(gelu(dense(states))));
      });
}

ElectraPreTraining electra_for_pre_training(Graph& graph, const ElectraConfig& config,
                                            const BertBuildOptions& options) {
  ElectraPreTraining model(graph, options.dtype);
  model.inputs = bert_inputs(graph, options);
  const int64_t batch = options.batch_size, seq = options.seq_len;
  if (options.with_labels) model.labels = graph.input("labels", options.index_dtype, {batch, seq});
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value sequence = electra_model(config, model.inputs, model.params, model.dropout);
  const int64_t hidden = config.hidden_size;
  Linear dense = Linear::create(model.params, "discriminator_predictions.dense", hidden, hidden,
                                config.initializer_range);
  Linear prediction = Linear::create(model.params, "discriminator_predictions.dense_prediction",
                                     hidden, 1, config.initializer_range);
  Value logits = prediction(activation(dense(sequence), config.hidden_act));
  model.logits = reshape(logits, {batch, seq});
  if (!options.with_labels) return model;
  check(options.label_smoothing == 0.0, "--label_smoothing_factor",
        "smooths class labels; ElectraForPreTraining's loss is a binary cross entropy");
  // The mean over the attended tokens: the terms of the others weigh 0.
  Value active = cast(model.inputs.attention_mask, options.dtype);
  Value terms = bce_with_logits(model.logits, cast(model.labels, options.dtype));
  model.loss = reduce_sum(terms * active) / reduce_sum(active);
  return model;
}

}  // namespace kiln
