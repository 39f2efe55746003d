// A token classification split as the Trainer feeds it (run_ner.py): tokenized word lists with
// their aligned labels, padded with -100 as DataCollatorForTokenClassification pads them, and
// run_ner.py's compute_metrics: seqeval over the tags at the labelled tokens.
#pragma once

#include <string>
#include <vector>

#include "kiln/io/ner_dataset.h"
#include "kiln/train/task.h"

namespace kiln {

class NerData : public TaskData {
 public:
  // `label_list` names the label ids; `entity_level_metrics` is --return_entity_level_metrics.
  NerData(NerDataset dataset, NerFeatures features, std::vector<std::string> label_list,
          bool entity_level_metrics);

  const std::string& source() const override { return dataset_.source; }
  size_t size() const override { return dataset_.size(); }
  bool has_labels() const override { return dataset_.has_tags(); }
  TensorMap collate(std::span<const size_t> rows, const CollateOptions& options, bool with_labels,
                    int64_t epoch) const override;
  // precision, recall, f1 and accuracy (seqeval's overall ones); with entity_level_metrics,
  // every seqeval result flattened as run_ner.py does: PER_precision, PER_recall, PER_f1,
  // PER_number, ..., overall_precision, overall_recall, overall_f1, overall_accuracy.
  nlohmann::json metrics(const ForwardOutputs& outputs) const override;

  // Each row's predicted tags at its labelled tokens (the first token of each word kept by
  // truncation; every token of it with --label_all_tokens): run_ner.py's true_predictions.
  std::vector<std::vector<std::string>> predicted_tags(const ForwardOutputs& outputs) const;

 private:
  NerDataset dataset_;
  NerFeatures features_;
  std::vector<std::string> label_list_;
  bool entity_level_metrics_ = false;
};

}  // namespace kiln
