// ElectraModel (BERT's embeddings and encoder with an optional projection between them) and its
// sequence-classification head, op for op as transformers' modeling_electra.py with eager
// attention.
#include "kiln/models/electra.h"

#include "kiln/ir/ops.h"
#include "kiln/models/roberta.h"
#include "kiln/nn/layers.h"

namespace kiln {

Value electra_model(const ElectraConfig& config, const BertInputs& inputs, ParameterSet& params,
                    DropoutContext& dropout, const std::string& prefix) {
  electra_config_check(config, "electra");
  Value x = bert_embeddings(config, inputs, params, dropout, prefixed(prefix, "embeddings"),
                            config.embedding_size);
  if (config.embedding_size != config.hidden_size) {
    Linear project = Linear::create(params, prefixed(prefix, "embeddings_project"),
                                    config.embedding_size, config.hidden_size,
                                    config.initializer_range);
    x = project(x);
  }
  return bert_encoder(config, x, inputs.attention_mask, params, dropout, prefix);
}

BertClassifier electra_for_sequence_classification(Graph& graph, const ElectraConfig& config,
                                                   const BertBuildOptions& options) {
  electra_config_check(config, "electra");
  return encoder_for_sequence_classification(
      graph, config, options,
      [&](const BertInputs& inputs, ParameterSet& params, DropoutContext& dropout) {
        // ElectraClassificationHead's activation is gelu (erf) whatever hidden_act says.
        return roberta_classification_head(config, electra_model(config, inputs, params, dropout),
                                           params, dropout, gelu);
      });
}

}  // namespace kiln
