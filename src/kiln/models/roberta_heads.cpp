// The question-answering, token-classification and masked-LM heads on RobertaModel, op for op as
// modeling_roberta.py.
#include "kiln/models/roberta_heads.h"

#include "kiln/ir/ops.h"
#include "kiln/models/roberta.h"
#include "kiln/nn/layers.h"

namespace kiln {
namespace {

// RobertaModel without a pooler: the encoder of the heads.
EncoderBody roberta_encoder_body(const RobertaConfig& config) {
  return [&config](const BertInputs& inputs, ParameterSet& params, DropoutContext& dropout) {
    return roberta_model(config, inputs, params, dropout, "roberta", /*add_pooling_layer=*/false)
        .sequence_output;
  };
}

}  // namespace

BertQuestionAnswering roberta_for_question_answering(Graph& graph, const RobertaConfig& config,
                                                     const BertBuildOptions& options) {
  return encoder_for_question_answering(graph, config, options, roberta_encoder_body(config));
}

BertTokenClassification roberta_for_token_classification(Graph& graph,
                                                         const RobertaConfig& config,
                                                         const BertBuildOptions& options) {
  return encoder_for_token_classification(graph, config, options, roberta_encoder_body(config));
}

BertMaskedLM roberta_for_masked_lm(Graph& graph, const RobertaConfig& config,
                                   const BertBuildOptions& options) {
  const int64_t hidden = config.hidden_size;
  return encoder_for_masked_lm(
      graph, options, roberta_encoder_body(config),
      [&](Value states, ParameterSet& params) {
        // HF's order: a module's own parameters (the bias) before its submodules'.
        Value bias = params.add("lm_head.bias", {config.vocab_size}, ParameterInit::zeros(),
                                /*decay=*/false);
        Linear dense = Linear::create(params, "lm_head.dense", hidden, hidden,
                                      config.initializer_range);
        LayerNorm norm =
            LayerNorm::create(params, "lm_head.layer_norm", hidden, config.layer_norm_eps);
        Linear decoder;
        decoder.weight = params.get("roberta.embeddings.word_embeddings.weight").value;
        decoder.bias = bias;
        // RobertaLMHead's activation is gelu (erf) whatever hidden_act says.
        return decoder(norm(gelu(dense(states))));
      });
}

}  // namespace kiln
