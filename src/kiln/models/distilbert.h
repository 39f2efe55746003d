// DistilBERT as transformers' DistilBertModel and DistilBertForSequenceClassification compute it
// (eager attention), built as a graph with static shapes [batch, seq] and Hugging Face parameter
// names. The heads take BERT's build options; the inputs have no token_type_ids.
#pragma once

#include <string>

#include "kiln/models/bert.h"
#include "kiln/models/distilbert_config.h"

namespace kiln {

// DistilBERT's LayerNorms have a fixed epsilon; its config has no key for it.
inline constexpr double kDistilBertLayerNormEps = 1e-12;

// Graph inputs of a batch, each [batch, seq] of options.index_dtype. DistilBERT has no token-type
// embeddings, and its tokenizer returns no token_type_ids (model_input_names): a batch's
// token_type_ids, when a collator makes them, are not fed.
struct DistilBertInputs {
  Value input_ids;
  Value attention_mask;  // 1 = attend, 0 = padding
};

DistilBertInputs distilbert_inputs(Graph& graph, const BertBuildOptions& options);

// DistilBertModel: embeddings (word + learned position, LayerNorm, dropout) and the post-LN
// transformer blocks -> last_hidden_state [batch, seq, dim]. Parameters are registered in the
// order of HF's state dict, named "<prefix>.embeddings.word_embeddings.weight", ... (no prefix
// when `prefix` is empty: a bare DistilBertModel checkpoint).
Value distilbert_model(const DistilBertConfig& config, const DistilBertInputs& inputs,
                       ParameterSet& params, DropoutContext& dropout,
                       const std::string& prefix = "distilbert");

// A DistilBertForSequenceClassification graph: the first token's states through pre_classifier,
// ReLU, dropout (seq_classif_dropout) and classifier; the loss as BertClassifier's. Graph inputs,
// in order: input_ids, attention_mask, labels (with_labels), dropout_seed and dropout_offset
// (training), then the parameters.
struct DistilBertClassifier {
  DistilBertClassifier(Graph& graph, DType dtype) : params(graph, dtype) {}

  DistilBertInputs inputs;
  Value labels;  // as BertClassifier::labels; invalid without labels
  Value logits;  // [batch, num_labels]
  Value loss;    // scalar; invalid without labels
  std::string problem_type;
  ParameterSet params;
  DropoutContext dropout;
};

DistilBertClassifier distilbert_for_sequence_classification(Graph& graph,
                                                            const DistilBertConfig& config,
                                                            const BertBuildOptions& options);

}  // namespace kiln
