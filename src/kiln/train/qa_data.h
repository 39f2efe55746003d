// Question-answering splits as the Trainer feeds them (run_qa.py): training features with their
// answer spans, and evaluation/prediction features whose start and end logits are post-processed
// into answers and scored with the official SQuAD v1.1 or v2.0 evaluation.
#pragma once

#include "kiln/io/squad_features.h"
#include "kiln/train/qa_postprocess.h"
#include "kiln/train/task.h"

namespace kiln {

class QaTrainData : public TaskData {
 public:
  explicit QaTrainData(QaFeatures features) : features_(std::move(features)) {}

  const std::string& source() const override { return features_.source; }
  size_t size() const override { return features_.size(); }
  bool has_labels() const override { return true; }
  TensorMap collate(std::span<const size_t> rows, const CollateOptions& options, bool with_labels,
                    int64_t epoch) const override;
  nlohmann::json metrics(const ForwardOutputs& outputs) const override;

 private:
  QaFeatures features_;
};

class QaEvalData : public TaskData {
 public:
  QaEvalData(SquadDataset dataset, QaFeatures features, QaPostprocessOptions options)
      : dataset_(std::move(dataset)), features_(std::move(features)), options_(options) {}

  const std::string& source() const override { return features_.source; }
  size_t size() const override { return features_.size(); }
  // As run_qa.py: evaluation features carry no positions, so there is no eval loss.
  bool has_labels() const override { return false; }
  TensorMap collate(std::span<const size_t> rows, const CollateOptions& options, bool with_labels,
                    int64_t epoch) const override;
  // HF's squad metric (exact_match, f1) or squad_v2 metric (exact, f1, total, HasAns_*, NoAns_*,
  // best_*; every no-answer probability 0.0, as run_qa.py passes them).
  nlohmann::json metrics(const ForwardOutputs& outputs) const override;

  // The answers, n-best lists and null odds from a forward pass over every feature.
  QaPredictionSet predictions(const ForwardOutputs& outputs) const;
  const SquadDataset& dataset() const { return dataset_; }
  const QaPostprocessOptions& options() const { return options_; }

 private:
  SquadDataset dataset_;
  QaFeatures features_;
  QaPostprocessOptions options_;
};

}  // namespace kiln
