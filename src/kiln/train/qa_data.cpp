// QA rows: batches of features, and answers scored as run_qa.py's post_processing_function.
#include "kiln/train/qa_data.h"

#include "kiln/ir/error.h"
#include "kiln/train/squad_metrics.h"

namespace kiln {
namespace {

TensorMap inputs_of(const Batch& batch) {
  return {{"input_ids", batch.input_ids},
          {"token_type_ids", batch.token_type_ids},
          {"attention_mask", batch.attention_mask}};
}

}  // namespace

TensorMap QaTrainData::collate(std::span<const size_t> rows, const CollateOptions& options,
                               bool with_labels, int64_t /*epoch*/) const {
  QaBatch batch = collate_qa_batch(features_, rows, options);
  TensorMap feeds = inputs_of(batch.inputs);
  if (with_labels) {
    feeds.emplace("start_positions", batch.start_positions);
    feeds.emplace("end_positions", batch.end_positions);
  }
  return feeds;
}

nlohmann::json QaTrainData::metrics(const ForwardOutputs& /*outputs*/) const {
  return nlohmann::json::object();
}

TensorMap QaEvalData::collate(std::span<const size_t> rows, const CollateOptions& options,
                              bool with_labels, int64_t /*epoch*/) const {
  check(!with_labels, features_.source, "evaluation features have no answer positions");
  return inputs_of(collate_qa_batch(features_, rows, options).inputs);
}

QaPredictionSet QaEvalData::predictions(const ForwardOutputs& outputs) const {
  check(outputs.rows.size() == 2, features_.source, "expected start and end logits");
  return postprocess_qa_predictions(dataset_, features_, outputs.rows[0], outputs.rows[1],
                                    options_);
}

nlohmann::json QaEvalData::metrics(const ForwardOutputs& outputs) const {
  QaPredictionSet answers = predictions(outputs);
  std::vector<SquadReference> references = squad_references(dataset_);
  nlohmann::ordered_json scores;
  if (options_.version_2_with_negative) {
    SquadNoAnswerProbs zeros;
    for (const auto& [id, text] : answers.predictions) zeros.emplace_back(id, 0.0);
    scores = squad_v2_evaluate(references, answers.predictions, &zeros);
  } else {
    scores = squad_v1_evaluate(references, answers.predictions);
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : scores.items()) out[key] = value;
  return out;
}

}  // namespace kiln
