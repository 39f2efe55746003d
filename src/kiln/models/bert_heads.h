// BertForQuestionAnswering, BertForTokenClassification and BertForMaskedLM as transformers
// computes them, with Hugging Face's parameter names: the encoder without a pooler, then a span
// head (qa_outputs), a classifier over every token, or the masked-LM head (cls.predictions:
// transform, decoder tied to the word embeddings, decoder bias). The encoder_for_* builders put
// the same heads, inputs and losses on another family's encoder whose inputs are BERT's (RoBERTa,
// ELECTRA).
#pragma once

#include <utility>

#include "kiln/models/bert.h"

namespace kiln {

// The pieces of these heads that other encoder families' heads share.
// [batch, seq, 2] -> the [batch, seq] slice `index` of the last axis (0: start, 1: end logits).
Value last_axis_slice(Value logits, int64_t index);
// The start_positions and end_positions inputs ([batch] of index_dtype); none without labels.
std::pair<Value, Value> span_positions(Graph& graph, const BertBuildOptions& options);
// transformers' span loss over start and end logits [batch, seq]: (CE(start) + CE(end)) / 2 with
// positions clamped to [0, seq] and seq ignored.
Value span_loss(Value start_logits, Value end_logits, Value start_positions, Value end_positions);

// A masked-LM head's label inputs (see BertMaskedLM): `labels` [batch, seq], or with
// options.mlm_predictions `masked_positions` and `masked_labels`; none without labels.
struct MaskedLmLabels {
  Value labels;
  Value masked_positions;  // invalid unless options.mlm_predictions
};
MaskedLmLabels masked_lm_labels(Graph& graph, const BertBuildOptions& options);
// The rows a masked-LM head predicts: sequence_output [batch, seq, hidden] itself, or its
// [predictions, hidden] rows at the flat `masked_positions` (when valid).
Value masked_lm_rows(Value sequence_output, Value masked_positions);
// Mean cross entropy (label-smoothed by `label_smoothing`) of logits [..., classes] against
// class labels [...], skipping -100: the loss of the masked-LM and token-classification heads.
Value token_cross_entropy(Value logits, Value labels, double label_smoothing);

// Graph inputs, in order: input_ids, token_type_ids, attention_mask, start_positions and
// end_positions (with_labels; [batch] of index_dtype), dropout_seed and dropout_offset
// (training), then the parameters.
struct BertQuestionAnswering {
  BertQuestionAnswering(Graph& graph, DType dtype) : params(graph, dtype) {}

  BertInputs inputs;
  Value start_positions, end_positions;  // invalid without labels
  Value start_logits, end_logits;        // [batch, seq]
  // (CE(start) + CE(end)) / 2 with positions clamped to [0, seq] and seq ignored, as HF; invalid
  // without labels.
  Value loss;
  ParameterSet params;
  DropoutContext dropout;
};

BertQuestionAnswering bert_for_question_answering(Graph& graph, const BertConfig& config,
                                                  const BertBuildOptions& options);
// qa_outputs on the sequence output of `encoder`.
BertQuestionAnswering encoder_for_question_answering(Graph& graph, const BertConfig& config,
                                                     const BertBuildOptions& options,
                                                     const EncoderBody& encoder);

// Graph inputs, in order: input_ids, token_type_ids, attention_mask, labels (with_labels;
// [batch, seq] of index_dtype, -100 where a token has no label), dropout_seed and dropout_offset
// (training), then the parameters.
struct BertTokenClassification {
  BertTokenClassification(Graph& graph, DType dtype) : params(graph, dtype) {}

  BertInputs inputs;
  Value labels;  // invalid without labels
  Value logits;  // [batch, seq, num_labels]
  // Mean cross entropy over the labels that are not -100 (label-smoothed as the Trainer does
  // with options.label_smoothing); invalid without labels.
  Value loss;
  ParameterSet params;
  DropoutContext dropout;
};

BertTokenClassification bert_for_token_classification(Graph& graph, const BertConfig& config,
                                                      const BertBuildOptions& options);
// Dropout (classifier_dropout, else hidden_dropout_prob) and `classifier` on every token of the
// sequence output of `encoder`.
BertTokenClassification encoder_for_token_classification(Graph& graph, const BertConfig& config,
                                                         const BertBuildOptions& options,
                                                         const EncoderBody& encoder);

// Graph inputs, in order: input_ids, token_type_ids, attention_mask, labels (with_labels;
// [batch, seq] of index_dtype, -100 where no token is predicted; with options.mlm_predictions,
// masked_positions and masked_labels instead), dropout_seed and dropout_offset (training), then
// the parameters. The decoder's weight is
// bert.embeddings.word_embeddings.weight itself (tie_word_embeddings), so it has no parameter of
// its own; its bias is cls.predictions.bias.
struct BertMaskedLM {
  BertMaskedLM(Graph& graph, DType dtype) : params(graph, dtype) {}

  BertInputs inputs;
  Value labels;  // invalid without labels; masked_labels with options.mlm_predictions
  Value masked_positions;  // with options.mlm_predictions
  // [batch, seq, vocab_size]; [mlm_predictions, vocab_size] at the masked positions with
  // options.mlm_predictions
  Value logits;
  Value loss;    // mean cross entropy over the labels that are not -100; invalid without labels
  ParameterSet params;
  DropoutContext dropout;
};

BertMaskedLM bert_for_masked_lm(Graph& graph, const BertConfig& config,
                                const BertBuildOptions& options);

// A masked-LM head: registers its parameters and maps hidden states [n, hidden] to logits
// [n, vocab_size].
using MaskedLmHead = std::function<Value(Value states, ParameterSet& params)>;
// `head` on the sequence output of `encoder` (only at the masked positions with
// options.mlm_predictions), with BertMaskedLM's inputs and loss.
BertMaskedLM encoder_for_masked_lm(Graph& graph, const BertBuildOptions& options,
                                   const EncoderBody& encoder, const MaskedLmHead& head);

}  // namespace kiln
