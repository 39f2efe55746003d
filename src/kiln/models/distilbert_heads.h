// DistilBertForQuestionAnswering, DistilBertForTokenClassification and DistilBertForMaskedLM as
// transformers computes them, with Hugging Face's parameter names: DistilBertModel, then a span
// head (qa_outputs), a per-token classifier, or the masked-LM head (vocab_transform, activation,
// vocab_layer_norm, vocab_projector tied to the word embeddings with a bias of its own).
#pragma once

#include "kiln/models/distilbert.h"

namespace kiln {

// Dropout (qa_dropout) on the last hidden states, then qa_outputs; the loss as
// BertQuestionAnswering's. Graph inputs, in order: input_ids, attention_mask, start_positions
// and end_positions (with_labels; [batch] of index_dtype), dropout_seed and dropout_offset
// (training), then the parameters.
struct DistilBertQuestionAnswering {
  DistilBertQuestionAnswering(Graph& graph, DType dtype) : params(graph, dtype) {}

  DistilBertInputs inputs;
  Value start_positions, end_positions;  // invalid without labels
  Value start_logits, end_logits;        // [batch, seq]
  Value loss;                            // invalid without labels
  ParameterSet params;
  DropoutContext dropout;
};

DistilBertQuestionAnswering distilbert_for_question_answering(Graph& graph,
                                                              const DistilBertConfig& config,
                                                              const BertBuildOptions& options);

// Dropout (config.dropout) on the last hidden states, then classifier: logits per token, and the
// mean cross entropy over the labels that are not -100. Graph inputs, in order: input_ids,
// attention_mask, labels (with_labels; [batch, seq] of index_dtype), dropout_seed and
// dropout_offset (training), then the parameters.
struct DistilBertTokenClassifier {
  DistilBertTokenClassifier(Graph& graph, DType dtype) : params(graph, dtype) {}

  DistilBertInputs inputs;
  Value labels;  // invalid without labels
  Value logits;  // [batch, seq, num_labels]
  Value loss;    // invalid without labels
  ParameterSet params;
  DropoutContext dropout;
};

DistilBertTokenClassifier distilbert_for_token_classification(Graph& graph,
                                                              const DistilBertConfig& config,
                                                              const BertBuildOptions& options);

// Graph inputs, in order: input_ids, attention_mask, the labels as BertMaskedLM's (with_labels),
// dropout_seed and dropout_offset (training), then the parameters. With tie_word_embeddings (the
// default) vocab_projector's weight is distilbert.embeddings.word_embeddings.weight itself and
// has no parameter of its own; its bias is vocab_projector.bias.
struct DistilBertMaskedLM {
  DistilBertMaskedLM(Graph& graph, DType dtype) : params(graph, dtype) {}

  DistilBertInputs inputs;
  Value labels;            // invalid without labels; masked_labels with options.mlm_predictions
  Value masked_positions;  // with options.mlm_predictions
  // [batch, seq, vocab_size]; [mlm_predictions, vocab_size] at the masked positions with
  // options.mlm_predictions
  Value logits;
  Value loss;  // mean cross entropy over the labels that are not -100; invalid without labels
  ParameterSet params;
  DropoutContext dropout;
};

DistilBertMaskedLM distilbert_for_masked_lm(Graph& graph, const DistilBertConfig& config,
                                            const BertBuildOptions& options);

}  // namespace kiln
