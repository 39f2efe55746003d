// A masked language modeling split as the Trainer feeds it (run_mlm.py): text examples whose
// batches are masked by DataCollatorForLanguageModeling's rules, afresh each epoch; evaluation
// batches are masked with a fixed key, so that every evaluation sees the same masks. Labels go
// to the model compacted (masked_positions, masked_labels: see compact_mlm_labels), for a head
// that predicts only there; the loss is the same as over the full [batch, length] labels.
#pragma once

#include "kiln/io/mlm_collate.h"
#include "kiln/train/task.h"

namespace kiln {

class MlmData : public TaskData {
 public:
  MlmData(LmDataset dataset, MlmOptions options)
      : dataset_(std::move(dataset)), options_(options) {}

  const std::string& source() const override { return dataset_.source; }
  size_t size() const override { return dataset_.size(); }
  bool has_labels() const override { return true; }
  TensorMap collate(std::span<const size_t> rows, const CollateOptions& options, bool with_labels,
                    int64_t epoch) const override;
  // None besides the loss; run_mlm.py adds perplexity = exp(eval_loss) to its final report.
  nlohmann::json metrics(const ForwardOutputs& outputs) const override;

 private:
  LmDataset dataset_;
  MlmOptions options_;
};

}  // namespace kiln
