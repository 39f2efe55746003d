// Classification rows: encode once, collate with labels, score the logits.
#include "kiln/train/classification_data.h"

#include "kiln/train/trainer_metrics.h"

namespace kiln {

ClassificationData::ClassificationData(const ClassificationDataset& dataset,
                                       const Tokenizer& tokenizer, size_t max_seq_length)
    : dataset_(dataset), encodings_(encode_dataset(tokenizer, dataset, max_seq_length)) {}

TensorMap ClassificationData::collate(std::span<const size_t> rows, const CollateOptions& options,
                                      bool with_labels, int64_t /*epoch*/) const {
  Batch batch = collate_batch(encodings_, dataset_, rows, options);
  TensorMap feeds = {{"input_ids", batch.input_ids},
                     {"token_type_ids", batch.token_type_ids},
                     {"attention_mask", batch.attention_mask}};
  if (with_labels && batch.labels) feeds.emplace("labels", *batch.labels);
  return feeds;
}

std::vector<double> ClassificationData::logits(const ForwardOutputs& outputs) {
  std::vector<double> out;
  for (const std::vector<float>& row : outputs.rows.at(0)) out.insert(out.end(), row.begin(), row.end());
  return out;
}

nlohmann::json ClassificationData::metrics(const ForwardOutputs& outputs) const {
  std::vector<double> values = logits(outputs);
  if (dataset_.label_kind == LabelKind::regression) {
    return regression_metrics(values, dataset_.label_values);
  }
  const auto labels = static_cast<int64_t>(dataset_.label_names.size());
  return classification_metrics(argmax_rows(values, labels), dataset_.label_ids, labels);
}

}  // namespace kiln
