// RobertaForQuestionAnswering, RobertaForTokenClassification and RobertaForMaskedLM (and their
// XLM-RoBERTa twins) as transformers computes them: the RoBERTa encoder without a pooler, then
// BERT's span head and token classifier, or RoBERTa's masked-LM head (lm_head: dense, gelu,
// layer_norm, decoder tied to the word embeddings with the bias lm_head.bias). Inputs, outputs
// and losses are those of the BERT heads (bert_heads.h).
#pragma once

#include "kiln/models/bert_heads.h"
#include "kiln/models/roberta_config.h"

namespace kiln {

BertQuestionAnswering roberta_for_question_answering(Graph& graph, const RobertaConfig& config,
                                                     const BertBuildOptions& options);

BertTokenClassification roberta_for_token_classification(Graph& graph,
                                                         const RobertaConfig& config,
                                                         const BertBuildOptions& options);

// The decoder's weight is roberta.embeddings.word_embeddings.weight itself (no parameter of its
// own); its bias is lm_head.bias.
BertMaskedLM roberta_for_masked_lm(Graph& graph, const RobertaConfig& config,
                                   const BertBuildOptions& options);

}  // namespace kiln
