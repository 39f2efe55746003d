// The classification and question-answering heads on GPT2Model, op for op as modeling_gpt2.py.
#include "kiln/models/gpt2_heads.h"

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert_heads.h"

namespace kiln {
namespace {

// hidden [batch, seq, n_embd] -> [batch, n_embd] at each row's last token that is not padding:
// argmax(arange(seq) * (input_ids != pad_token_id)), whose maximum is the index itself.
Value last_token_states(const Gpt2Config& config, Value hidden, Value input_ids) {
  Graph& graph = hidden.graph();
  const int64_t batch = hidden.dim(0), seq = hidden.dim(1), width = hidden.dim(2);
  const DType index = input_ids.dtype();
  Value last;
  if (config.pad_token_id) {
    Value pad = full(graph, static_cast<double>(*config.pad_token_id), index, input_ids.shape());
    Value positions = iota(graph, index, input_ids.shape(), 1);
    Value real = select(ne(input_ids, pad), positions, zeros_like(positions));
    last = reduce_max(real, {1});
  } else {
    check(batch == 1, "gpt2",
          "Cannot handle batch sizes > 1 if no padding token is defined (config.json has no "
          "pad_token_id; transformers refuses it too)");
    last = full(graph, static_cast<double>(seq - 1), index, {batch});
  }
  Value rows = iota(graph, index, {batch}, 0) * static_cast<double>(seq) + last;
  return gather(reshape(hidden, {batch * seq, width}), rows, 0);
}

}  // namespace

Gpt2SequenceClassifier gpt2_for_sequence_classification(Graph& graph, const Gpt2Config& config,
                                                        const BertBuildOptions& options) {
  Gpt2SequenceClassifier model(graph, options.dtype);
  model.inputs = gpt2_inputs(graph, options);
  model.problem_type = classification_problem_type(config.problem_type, config.num_labels(),
                                                   options.integer_labels);
  if (options.with_labels) {
    model.labels =
        sequence_classification_labels(graph, model.problem_type, config.num_labels(), options);
  }
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);
  Value hidden = gpt2_model(config, model.inputs, model.params, model.dropout);
  Linear score = Linear::create(model.params, "score", config.n_embd, config.num_labels(),
                                config.initializer_range, /*with_bias=*/false);
  // Scoring only the pooled token gives the same logits as scoring every token first.
  model.logits = score(last_token_states(config, hidden, model.inputs.input_ids));
  if (!options.with_labels) return model;
  model.loss = sequence_classification_loss(model.logits, model.labels, model.problem_type,
                                            model.inputs.attention_mask, options.label_smoothing);
  return model;
}

Gpt2TokenClassifier gpt2_for_token_classification(Graph& graph, const Gpt2Config& config,
                                                  const BertBuildOptions& options) {
  Gpt2TokenClassifier model(graph, options.dtype);
  model.inputs = gpt2_inputs(graph, options);
  if (options.with_labels) model.labels = token_input(graph, "labels", options);
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);
  Value hidden = gpt2_model(config, model.inputs, model.params, model.dropout);
  const double rate = config.classifier_dropout.value_or(config.hidden_dropout.value_or(0.1));
  Linear classifier = Linear::create(model.params, "classifier", config.n_embd,
                                     config.num_labels(), config.initializer_range);
  model.logits = classifier(model.dropout(hidden, rate));
  if (!options.with_labels) return model;
  model.loss = token_cross_entropy(model.logits, model.labels, options.label_smoothing);
  return model;
}

Gpt2QuestionAnswering gpt2_for_question_answering(Graph& graph, const Gpt2Config& config,
                                                  const BertBuildOptions& options) {
  Gpt2QuestionAnswering model(graph, options.dtype);
  model.inputs = gpt2_inputs(graph, options);
  std::tie(model.start_positions, model.end_positions) = span_positions(graph, options);
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);
  Value hidden = gpt2_model(config, model.inputs, model.params, model.dropout);
  // Two outputs whatever num_labels is, as transformers.
  Linear qa_outputs =
      Linear::create(model.params, "qa_outputs", config.n_embd, 2, config.initializer_range);
  Value logits = qa_outputs(hidden);
  model.start_logits = last_axis_slice(logits, 0);
  model.end_logits = last_axis_slice(logits, 1);
  if (!options.with_labels) return model;
  model.loss = span_loss(model.start_logits, model.end_logits, model.start_positions,
                         model.end_positions);
  return model;
}

}  // namespace kiln
