// BERT as transformers' BertModel and BertForSequenceClassification compute it (eager attention),
// built as a graph with static shapes [batch, seq] and Hugging Face parameter names.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "kiln/models/bert_config.h"
#include "kiln/models/build_options.h"
#include "kiln/nn/dropout.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {

// The options every family's heads take (build_options.h), by BERT's name.
using BertBuildOptions = ModelBuildOptions;

// A [batch, seq] graph input of options.index_dtype (token ids, masks); checks the options' sizes
// and index dtype.
Value token_input(Graph& graph, const std::string& name, const BertBuildOptions& options);

// Graph inputs of a batch, each [batch, seq] of options.index_dtype.
struct BertInputs {
  Value input_ids;
  Value token_type_ids;
  Value attention_mask;  // 1 = attend, 0 = padding
};

BertInputs bert_inputs(Graph& graph, const BertBuildOptions& options);

struct BertOutputs {
  Value sequence_output;  // [batch, seq, hidden]: last_hidden_state
  Value pooled_output;    // [batch, hidden]: tanh(dense(first token)); invalid without a pooler
};

// BertModel: embeddings, the post-LN encoder and the pooler. Parameters are registered in the
// order of HF's state dict, named "<prefix>.embeddings.word_embeddings.weight", ... (no prefix
// when `prefix` is empty: a bare BertModel checkpoint).
BertOutputs bert_model(const BertConfig& config, const BertInputs& inputs, ParameterSet& params,
                       DropoutContext& dropout, const std::string& prefix = "bert",
                       bool add_pooling_layer = true);

// "<prefix>.<name>", or `name` when the prefix is empty (a bare model's checkpoint).
std::string prefixed(const std::string& prefix, const std::string& name);
// [batch, seq, hidden] -> [batch, hidden]: the first token's states (x[:, 0]).
Value first_token(Value sequence_output);

// The parts of BertModel that other encoder families reuse (RoBERTa, ELECTRA).
// BertEmbeddings under `prefix` ("<model>.embeddings"): word + token_type + position (arange)
// embeddings of `width` features, LayerNorm and dropout.
Value bert_embeddings(const BertConfig& config, const BertInputs& inputs, ParameterSet& params,
                      DropoutContext& dropout, const std::string& prefix, int64_t width);
// The post-LN encoder layers "<prefix>.encoder.layer.<i>" on embeddings [batch, seq, hidden],
// attending to the keys where `attention_mask` ([batch, seq] of 1/0) is 1.
Value bert_encoder(const BertConfig& config, Value embeddings, Value attention_mask,
                   ParameterSet& params, DropoutContext& dropout, const std::string& prefix);
// BertPooler "<prefix>.pooler.dense": tanh(dense(first token)) -> [batch, hidden].
Value bert_pooler(const BertConfig& config, Value sequence_output, ParameterSet& params,
                  const std::string& prefix);

// The labels input of a sequence classifier for `problem_type` (see BertClassifier::labels).
Value sequence_classification_labels(Graph& graph, const std::string& problem_type,
                                     int64_t num_labels, const BertBuildOptions& options);
// transformers' ...ForSequenceClassification loss of logits [batch, num_labels] for
// `problem_type`: MSE (one label's logits squeezed), cross entropy (label-smoothed by
// `label_smoothing`, which the other losses refuse) or BCE with logits; MSE and BCE average over
// the real rows, those whose `attention_mask` is not all zero (see collate.h).
Value sequence_classification_loss(Value logits, Value labels, const std::string& problem_type,
                                   Value attention_mask, double label_smoothing);

// A BertForSequenceClassification graph. Graph inputs, in order: input_ids, token_type_ids,
// attention_mask, labels (with_labels), dropout_seed and dropout_offset (training), then the
// parameters (role weight).
struct BertClassifier {
  BertClassifier(Graph& graph, DType dtype) : params(graph, dtype) {}

  BertInputs inputs;
  // [batch] i64/i32 (single label, index_dtype), [batch] f32 (regression with one label) or
  // [batch, num_labels] f32 (multi-label, regression with several); invalid without labels.
  Value labels;
  Value logits;  // [batch, num_labels]
  Value loss;    // scalar; invalid without labels
  std::string problem_type;
  ParameterSet params;
  DropoutContext dropout;
};

BertClassifier bert_for_sequence_classification(Graph& graph, const BertConfig& config,
                                                const BertBuildOptions& options);

// What a family builds between a head's inputs and its output: registers the parameters (in
// state-dict order) and returns the logits, or the sequence output for the encoder_for_* heads of
// bert_heads.h. The families whose inputs are BERT's (RoBERTa, ELECTRA) build their heads so.
using EncoderBody =
    std::function<Value(const BertInputs& inputs, ParameterSet& params, DropoutContext& dropout)>;

// A ForSequenceClassification model whose logits [batch, num_labels] `body` computes, with
// BertClassifier's inputs, labels and losses.
BertClassifier encoder_for_sequence_classification(Graph& graph, const BertConfig& config,
                                                   const BertBuildOptions& options,
                                                   const EncoderBody& body);

}  // namespace kiln
