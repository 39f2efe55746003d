// Classification rows: encode once, collate with labels, score the logits.
#include "kiln/train/classification_data.h"

#include <utility>

#include "kiln/ir/error.h"
#include "kiln/train/glue_metrics.h"
#include "kiln/train/trainer_metrics.h"

namespace kiln {

void check_classification_labels(const ClassificationDataset& data, const PretrainedConfig& config,
                                 const std::string& where) {
  check(data.num_labels() == config.num_labels(), where, "the data has ", data.num_labels(),
        " labels, the model ", config.num_labels());
  const bool label_sets = data.label_kind == LabelKind::multi_label;
  check(label_sets == (config.problem_type == "multi_label_classification"), where,
        label_sets ? "the labels are lists (multi-label) but the model's problem_type is "
                   : "the labels are single labels but the model's problem_type is ",
        config.problem_type.value_or("unset"));
}

ClassificationData::ClassificationData(const ClassificationDataset& dataset,
                                       const Tokenizer& tokenizer, size_t max_seq_length,
                                       std::string glue_task)
    : dataset_(dataset),
      encodings_(encode_dataset(tokenizer, dataset, max_seq_length)),
      glue_task_(std::move(glue_task)) {}

ClassificationData::ClassificationData(std::shared_ptr<const ClassificationDataset> dataset,
                                       const Tokenizer& tokenizer, size_t max_seq_length,
                                       std::string glue_task)
    : owned_(std::move(dataset)),
      dataset_(*owned_),
      encodings_(encode_dataset(tokenizer, dataset_, max_seq_length)),
      glue_task_(std::move(glue_task)) {}

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
  const auto labels = static_cast<int64_t>(dataset_.label_names.size());
  if (dataset_.label_kind == LabelKind::multi_label) {
    check(glue_task_.empty(), "--task_name", glue_task_, " is not a multi-label task but ",
          dataset_.source, " has label lists");
    return multi_label_metrics(values, dataset_.label_sets, labels);
  }
  const bool regression = dataset_.label_kind == LabelKind::regression;
  if (!glue_task_.empty()) {
    check(regression == glue_task_is_regression(glue_task_), "--task_name",
          glue_task_, regression ? " is a classification task but " : " is a regression task but ",
          dataset_.source, regression ? " has float labels" : " has class labels");
  }
  if (regression) {
    return glue_task_.empty() ? regression_metrics(values, dataset_.label_values)
                              : glue_regression_metrics(values, dataset_.label_values);
  }
  const std::vector<int64_t> predictions = argmax_rows(values, labels);
  return glue_task_.empty()
             ? classification_metrics(predictions, dataset_.label_ids, labels)
             : glue_class_metrics(glue_task_, predictions, dataset_.label_ids, labels);
}

}  // namespace kiln
