// ElectraForQuestionAnswering, ElectraForTokenClassification, ElectraForMaskedLM (the generator)
// and ElectraForPreTraining (the discriminator) as transformers computes them: ElectraModel, then
// BERT's span head and token classifier, the generator's head (generator_predictions: dense to
// embedding_size, gelu, LayerNorm; generator_lm_head tied to the word embeddings, with its own
// bias) or the discriminator's (discriminator_predictions: dense, hidden_act, dense_prediction to
// one logit per token). Inputs, outputs and losses of the first three are those of the BERT heads
// (bert_heads.h).
#pragma once

#include "kiln/models/bert_heads.h"
#include "kiln/models/electra_config.h"

namespace kiln {

BertQuestionAnswering electra_for_question_answering(Graph& graph, const ElectraConfig& config,
                                                     const BertBuildOptions& options);

BertTokenClassification electra_for_token_classification(Graph& graph,
                                                         const ElectraConfig& config,
                                                         const BertBuildOptions& options);

// The decoder's weight is electra.embeddings.word_embeddings.weight itself (no parameter of its
// own); its bias is generator_lm_head.bias.
BertMaskedLM electra_for_masked_lm(Graph& graph, const ElectraConfig& config,
                                   const BertBuildOptions& options);

// Graph inputs, in order: input_ids, token_type_ids, attention_mask, labels (with_labels;
// [batch, seq] of index_dtype, 1 for a replaced token, 0 for an original), dropout_seed and
// dropout_offset (training), then the parameters.
struct ElectraPreTraining {
  ElectraPreTraining(Graph& graph, DType dtype) : params(graph, dtype) {}

  BertInputs inputs;
  Value labels;  // invalid without labels
  Value logits;  // [batch, seq]: replaced-token logits
  // BCE with logits averaged over the tokens whose attention mask is 1, as transformers computes
  // it; invalid without labels.
  Value loss;
  ParameterSet params;
  DropoutContext dropout;
};

ElectraPreTraining electra_for_pre_training(Graph& graph, const ElectraConfig& config,
                                            const BertBuildOptions& options);

}  // namespace kiln
