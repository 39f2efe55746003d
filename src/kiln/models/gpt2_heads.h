// GPT2ForSequenceClassification, GPT2ForTokenClassification and GPT2ForQuestionAnswering as
// transformers computes them, with Hugging Face's parameter names: GPT2Model under "transformer",
// then `score` (no bias) on the last token that is not padding, `classifier` on every token, or
// `qa_outputs`.
#pragma once

#include "kiln/models/gpt2.h"

namespace kiln {

// Graph inputs, in order: input_ids, attention_mask, labels (with_labels; see
// BertClassifier::labels), dropout_seed and dropout_offset (training), then the parameters.
struct Gpt2SequenceClassifier {
  Gpt2SequenceClassifier(Graph& graph, DType dtype) : params(graph, dtype) {}

  Gpt2Inputs inputs;
  Value labels;  // invalid without labels
  // [batch, num_labels]: the scores of each row's last token that is not config.pad_token_id
  // (the rightmost one, as transformers 5 finds it; the first token when all are padding); with
  // no pad_token_id, the last token, and then only batches of one row (transformers' rule).
  Value logits;
  Value loss;  // as BertClassifier's; invalid without labels
  std::string problem_type;
  ParameterSet params;
  DropoutContext dropout;
};

Gpt2SequenceClassifier gpt2_for_sequence_classification(Graph& graph, const Gpt2Config& config,
                                                        const BertBuildOptions& options);

// Graph inputs, in order: input_ids, attention_mask, labels (with_labels; [batch, seq] of
// index_dtype, -100 where a token has no label), dropout_seed and dropout_offset (training), then
// the parameters.
struct Gpt2TokenClassifier {
  Gpt2TokenClassifier(Graph& graph, DType dtype) : params(graph, dtype) {}

  Gpt2Inputs inputs;
  Value labels;  // invalid without labels
  Value logits;  // [batch, seq, num_labels]
  Value loss;    // mean cross entropy over the labels that are not -100; invalid without labels
  ParameterSet params;
  DropoutContext dropout;
};

// The dropout before `classifier` is classifier_dropout, else hidden_dropout, else 0.1.
Gpt2TokenClassifier gpt2_for_token_classification(Graph& graph, const Gpt2Config& config,
                                                  const BertBuildOptions& options);

// Graph inputs, in order: input_ids, attention_mask, start_positions and end_positions
// (with_labels; [batch] of index_dtype), dropout_seed and dropout_offset (training), then the
// parameters.
struct Gpt2QuestionAnswering {
  Gpt2QuestionAnswering(Graph& graph, DType dtype) : params(graph, dtype) {}

  Gpt2Inputs inputs;
  Value start_positions, end_positions;  // invalid without labels
  Value start_logits, end_logits;        // [batch, seq]
  Value loss;  // span_loss (bert_heads.h); invalid without labels
  ParameterSet params;
  DropoutContext dropout;
};

Gpt2QuestionAnswering gpt2_for_question_answering(Graph& graph, const Gpt2Config& config,
                                                  const BertBuildOptions& options);

}  // namespace kiln
