// A classification split as the Trainer feeds it: run_glue.py's tokenized examples, batches with
// their labels, and accuracy/F1 (or MSE) from the logits.
#pragma once

#include <string>
#include <vector>

#include "kiln/io/dataset.h"
#include "kiln/io/tokenizer.h"
#include "kiln/train/task.h"

namespace kiln {

class ClassificationData : public TaskData {
 public:
  // Tokenizes `dataset` (which must outlive this object) as encode_dataset does. `glue_task`
  // (--task_name; empty: none) picks the metrics.
  ClassificationData(const ClassificationDataset& dataset, const Tokenizer& tokenizer,
                     size_t max_seq_length, std::string glue_task = "");

  const std::string& source() const override { return dataset_.source; }
  size_t size() const override { return dataset_.size(); }
  bool has_labels() const override { return dataset_.label_kind != LabelKind::none; }
  bool integer_labels() const override { return dataset_.label_kind != LabelKind::regression; }
  TensorMap collate(std::span<const size_t> rows, const CollateOptions& options, bool with_labels,
                    int64_t epoch) const override;
  // The GLUE task's metrics (glue_metrics.h); without one, accuracy and f1 (classes) or mse
  // (regression), as today's run_glue.py without --task_name reports accuracy or mse.
  nlohmann::json metrics(const ForwardOutputs& outputs) const override;

  const ClassificationDataset& dataset() const { return dataset_; }
  // The logits of every row, [rows, num_labels] row-major.
  static std::vector<double> logits(const ForwardOutputs& outputs);

 private:
  const ClassificationDataset& dataset_;
  std::vector<Encoding> encodings_;
  std::string glue_task_;
};

}  // namespace kiln
