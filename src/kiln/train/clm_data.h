// A causal language modeling split as the Trainer feeds it (run_clm.py): blocks of text whose
// labels are their own ids (the model shifts them to predict each next token), and run_clm.py's
// next-token accuracy.
#pragma once

#include "kiln/io/lm_dataset.h"
#include "kiln/train/task.h"

namespace kiln {

class ClmData : public TaskData {
 public:
  // Blocks of one length (lm_dataset's), at least one.
  explicit ClmData(LmDataset dataset);

  const std::string& source() const override { return dataset_.source; }
  size_t size() const override { return dataset_.size(); }
  bool has_labels() const override { return true; }
  // input_ids, attention_mask and labels [batch_size, block]. run_clm.py never pads; a short last
  // batch's padding rows here have ids options.pad_id (0 without one: GPT-2 has none), attention
  // mask 0 and labels -100, so that they change neither loss nor gradients.
  TensorMap collate(std::span<const size_t> rows, const CollateOptions& options, bool with_labels,
                    int64_t epoch) const override;
  // "accuracy": run_clm.py's compute_metrics over the predictions (the head's argmax, see
  // causal_lm_predictions): prediction t of each block against its token t + 1.
  nlohmann::json metrics(const ForwardOutputs& outputs) const override;

 private:
  LmDataset dataset_;
  size_t block_ = 0;
};

}  // namespace kiln
