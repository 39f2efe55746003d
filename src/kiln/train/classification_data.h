// A classification split as the Trainer feeds it: run_glue.py's tokenized examples, batches with
// their labels, and accuracy/F1 (or MSE) from the logits.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/io/dataset.h"
#include "kiln/io/tokenizer.h"
#include "kiln/models/pretrained_config.h"
#include "kiln/train/task.h"

namespace kiln {

// The data has as many labels as the model, and label lists exactly when the model's
// problem_type is multi-label; errors name `where`.
void check_classification_labels(const ClassificationDataset& data, const PretrainedConfig& config,
                                 const std::string& where);

class ClassificationData : public TaskData {
 public:
  // Tokenizes `dataset` (which must outlive this object) as encode_dataset does. `glue_task`
  // (--task_name; empty: none) picks the metrics.
  ClassificationData(const ClassificationDataset& dataset, const Tokenizer& tokenizer,
                     size_t max_seq_length, std::string glue_task = "");
  // The same over a dataset it keeps.
  ClassificationData(std::shared_ptr<const ClassificationDataset> dataset,
                     const Tokenizer& tokenizer, size_t max_seq_length, std::string glue_task = "");

  const std::string& source() const override { return dataset_.source; }
  size_t size() const override { return dataset_.size(); }
  bool has_labels() const override { return dataset_.label_kind != LabelKind::none; }
  bool integer_labels() const override { return dataset_.label_kind == LabelKind::classes; }
  TensorMap collate(std::span<const size_t> rows, const CollateOptions& options, bool with_labels,
                    int64_t epoch) const override;
  // The GLUE task's metrics (glue_metrics.h); without one, accuracy and f1 (classes), mse
  // (regression), or subset accuracy, micro and macro F1 (label sets; trainer_metrics.h).
  nlohmann::json metrics(const ForwardOutputs& outputs) const override;

  const ClassificationDataset& dataset() const { return dataset_; }
  // The logits of every row, [rows, num_labels] row-major.
  static std::vector<double> logits(const ForwardOutputs& outputs);

 private:
  std::shared_ptr<const ClassificationDataset> owned_;  // null: the caller keeps the dataset
  const ClassificationDataset& dataset_;
  std::vector<Encoding> encodings_;
  std::string glue_task_;
};

}  // namespace kiln
