// ELECTRA as transformers' ElectraModel and ElectraForSequenceClassification compute it (eager
// attention): BERT's embeddings at embedding_size, `embeddings_project` to hidden_size when the two
// differ, BERT's encoder under "electra.", and no pooler. Graph inputs and outputs are BERT's
// (bert.h).
#pragma once

#include <string>

#include "kiln/models/bert.h"
#include "kiln/models/electra_config.h"

namespace kiln {

// ElectraModel's last hidden state [batch, seq, hidden], with parameters in the order of HF's
// state dict under `prefix` (none: a bare ElectraModel checkpoint).
Value electra_model(const ElectraConfig& config, const BertInputs& inputs, ParameterSet& params,
                    DropoutContext& dropout, const std::string& prefix = "electra");

// ElectraForSequenceClassification:
// classifier.out_proj(dropout(gelu(classifier.dense(dropout(first token))))); inputs, labels and
// losses as bert_for_sequence_classification.
BertClassifier electra_for_sequence_classification(Graph& graph, const ElectraConfig& config,
                                                   const BertBuildOptions& options);

}  // namespace kiln
