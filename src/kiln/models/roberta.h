// RoBERTa (and XLM-RoBERTa, the same graph) as transformers' RobertaModel and
// RobertaForSequenceClassification compute it (eager attention): BERT's encoder under "roberta."
// with RoBERTa's embeddings, whose position ids count the real tokens from pad_token_id + 1.
// Graph inputs and outputs are BERT's (bert.h); token_type_ids are zeros for RoBERTa's
// tokenizers, which give none (type_vocab_size is 1 in its checkpoints).
#pragma once

#include <string>

#include "kiln/models/bert.h"
#include "kiln/models/roberta_config.h"

namespace kiln {

// RobertaModel: embeddings, BERT's post-LN encoder and (add_pooling_layer) BERT's pooler, with
// parameters in the order of HF's state dict under `prefix` (none: a bare RobertaModel
// checkpoint). Position ids are (cumulative count of non-padding ids) * (id != pad) + pad, as
// create_position_ids_from_input_ids computes them.
BertOutputs roberta_model(const RobertaConfig& config, const BertInputs& inputs,
                          ParameterSet& params, DropoutContext& dropout,
                          const std::string& prefix = "roberta", bool add_pooling_layer = true);

// RobertaForSequenceClassification: the encoder without a pooler, then
// classifier.out_proj(dropout(tanh(classifier.dense(dropout(<s>))))); inputs, labels and losses as
// bert_for_sequence_classification.
BertClassifier roberta_for_sequence_classification(Graph& graph, const RobertaConfig& config,
                                                   const BertBuildOptions& options);

// RobertaClassificationHead, which ELECTRA's shares with gelu for tanh: under "classifier.",
// out_proj(dropout(activation(dense(dropout(first token))))), dropout at classifier_dropout (else
// hidden_dropout_prob) -> [batch, num_labels].
Value roberta_classification_head(const BertConfig& config, Value sequence_output,
                                  ParameterSet& params, DropoutContext& dropout,
                                  Value (*activation)(Value));

}  // namespace kiln
