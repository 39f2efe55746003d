// Masked-LM rows: batches with masked inputs and their labels.
#include "kiln/train/mlm_data.h"

namespace kiln {

TensorMap MlmData::collate(std::span<const size_t> rows, const CollateOptions& options,
                           bool with_labels, int64_t epoch) const {
  MlmBatch batch = collate_mlm_batch(dataset_, rows, options, options_, epoch);
  TensorMap feeds = {{"input_ids", batch.inputs.input_ids},
                     {"token_type_ids", batch.inputs.token_type_ids},
                     {"attention_mask", batch.inputs.attention_mask}};
  if (with_labels) {
    const int64_t capacity =
        mlm_prediction_capacity(batch.labels.numel(), options_.mlm_probability);
    // A replica past the end of the data has no rows (only padding).
    const std::string where = rows.empty() ? dataset_.source
                                           : dataset_.where(rows.front()) + " (the batch starting there)";
    MlmPredictions predictions = compact_mlm_labels(batch.labels, capacity, where);
    feeds.emplace("masked_positions", std::move(predictions.positions));
    feeds.emplace("masked_labels", std::move(predictions.labels));
  }
  return feeds;
}

nlohmann::json MlmData::metrics(const ForwardOutputs& /*outputs*/) const {
  return nlohmann::json::object();
}

}  // namespace kiln
