// The question-answering, token-classification and masked-LM heads on DistilBertModel, op for op
// as modeling_distilbert.py; their losses are BERT's heads' (bert_heads.h).
#include "kiln/models/distilbert_heads.h"

#include <tuple>

#include "kiln/ir/error.h"
#include "kiln/models/bert_heads.h"
#include "kiln/nn/activation.h"
#include "kiln/nn/layers.h"

namespace kiln {

DistilBertQuestionAnswering distilbert_for_question_answering(Graph& graph,
                                                              const DistilBertConfig& config,
                                                              const BertBuildOptions& options) {
  distilbert_config_check(config, "distilbert");
  check(config.num_labels() == 2, "distilbert", "DistilBertForQuestionAnswering needs num_labels "
        "2 (start and end logits), not ", config.num_labels());
  DistilBertQuestionAnswering model(graph, options.dtype);
  model.inputs = distilbert_inputs(graph, options);
  std::tie(model.start_positions, model.end_positions) = span_positions(graph, options);
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value hidden = distilbert_model(config, model.inputs, model.params, model.dropout);
  Linear qa_outputs =
      Linear::create(model.params, "qa_outputs", config.dim, 2, config.initializer_range);
  Value logits = qa_outputs(model.dropout(hidden, config.qa_dropout));
  model.start_logits = last_axis_slice(logits, 0);
  model.end_logits = last_axis_slice(logits, 1);
  if (!options.with_labels) return model;
  model.loss = span_loss(model.start_logits, model.end_logits, model.start_positions,
                         model.end_positions);
  return model;
}

DistilBertTokenClassifier distilbert_for_token_classification(Graph& graph,
                                                              const DistilBertConfig& config,
                                                              const BertBuildOptions& options) {
  distilbert_config_check(config, "distilbert");
  DistilBertTokenClassifier model(graph, options.dtype);
  model.inputs = distilbert_inputs(graph, options);
  if (options.with_labels) model.labels = token_input(graph, "labels", options);
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value hidden = distilbert_model(config, model.inputs, model.params, model.dropout);
  Linear classifier = Linear::create(model.params, "classifier", config.dim, config.num_labels(),
                                     config.initializer_range);
  model.logits = classifier(model.dropout(hidden, config.dropout));
  if (!options.with_labels) return model;
  model.loss = token_cross_entropy(model.logits, model.labels, options.label_smoothing);
  return model;
}

DistilBertMaskedLM distilbert_for_masked_lm(Graph& graph, const DistilBertConfig& config,
                                            const BertBuildOptions& options) {
  distilbert_config_check(config, "distilbert");
  DistilBertMaskedLM model(graph, options.dtype);
  model.inputs = distilbert_inputs(graph, options);
  MaskedLmLabels labels = masked_lm_labels(graph, options);
  model.labels = labels.labels;
  model.masked_positions = labels.masked_positions;
  if (options.training) model.dropout = DropoutContext::with_inputs(graph, options.batch_size);

  Value hidden = distilbert_model(config, model.inputs, model.params, model.dropout);
  const int64_t dim = config.dim;
  Linear transform = Linear::create(model.params, "vocab_transform", dim, dim,
                                    config.initializer_range);
  LayerNorm norm =
      LayerNorm::create(model.params, "vocab_layer_norm", dim, kDistilBertLayerNormEps);
  Linear projector;
  if (config.tie_word_embeddings) {
    projector.weight = model.params.get("distilbert.embeddings.word_embeddings.weight").value;
    projector.bias = model.params.add("vocab_projector.bias", {config.vocab_size},
                                      ParameterInit::zeros(), /*decay=*/false);
  } else {
    projector = Linear::create(model.params, "vocab_projector", dim, config.vocab_size,
                               config.initializer_range);
  }
  Value rows = masked_lm_rows(hidden, model.masked_positions);
  model.logits = projector(norm(activation(transform(rows), config.activation)));
  if (!options.with_labels) return model;
  model.loss = token_cross_entropy(model.logits, model.labels, options.label_smoothing);
  return model;
}

}  // namespace kiln
