// Token classification rows: batches with per-token labels, and seqeval from the logits.
#include "kiln/train/ner_data.h"

#include <algorithm>
#include <utility>

#include "kiln/io/collate.h"
#include "kiln/ir/error.h"
#include "kiln/train/seqeval_metrics.h"
#include "kiln/train/trainer_metrics.h"

namespace kiln {
namespace {

template <typename Index>
void fill_token_labels(Tensor& out, const Batch& batch,
                       const std::vector<std::vector<int32_t>>& labels) {
  Index* cells = out.data_as<Index>();
  std::fill(cells, cells + out.numel(), static_cast<Index>(kIgnoredLabel));
  for (size_t row = 0; row < batch.indices.size(); ++row) {
    const std::vector<int32_t>& tokens = labels[batch.indices[row]];
    std::copy(tokens.begin(), tokens.end(), cells + row * batch.length);
  }
}

}  // namespace

NerData::NerData(NerDataset dataset, NerFeatures features, std::vector<std::string> label_list,
                 bool entity_level_metrics)
    : dataset_(std::move(dataset)),
      features_(std::move(features)),
      label_list_(std::move(label_list)),
      entity_level_metrics_(entity_level_metrics) {}

TensorMap NerData::collate(std::span<const size_t> rows, const CollateOptions& options,
                           bool with_labels, int64_t /*epoch*/) const {
  Batch batch = collate_inputs(features_.encodings, rows, options,
                               [&](size_t row) { return dataset_.where(row); });
  TensorMap feeds = {{"input_ids", batch.input_ids},
                     {"token_type_ids", batch.token_type_ids},
                     {"attention_mask", batch.attention_mask}};
  if (with_labels) {
    Tensor labels(options.index_dtype, batch.input_ids.shape());
    if (options.index_dtype == DType::i32) {
      fill_token_labels<int32_t>(labels, batch, features_.labels);
    } else {
      fill_token_labels<int64_t>(labels, batch, features_.labels);
    }
    feeds.emplace("labels", std::move(labels));
  }
  return feeds;
}

std::vector<std::vector<std::string>> NerData::predicted_tags(
    const ForwardOutputs& outputs) const {
  check(outputs.rows.size() == 1 && outputs.rows[0].size() == size(), dataset_.source,
        "expected the logits of every row");
  const auto labels = static_cast<int64_t>(label_list_.size());
  std::vector<std::vector<std::string>> tags(size());
  for (size_t row = 0; row < size(); ++row) {
    const std::vector<float>& logits = outputs.rows[0][row];
    const std::vector<int32_t>& wanted = features_.labels[row];
    check(logits.size() >= wanted.size() * label_list_.size(), dataset_.where(row),
          logits.size(), " logits for ", wanted.size(), " tokens of ", labels, " labels");
    const std::vector<int64_t> best =
        argmax_rows(std::vector<double>(logits.begin(), logits.end()), labels);
    for (size_t t = 0; t < wanted.size(); ++t) {
      if (wanted[t] != kIgnoredLabel) {
        tags[row].push_back(label_list_[static_cast<size_t>(best[t])]);
      }
    }
  }
  return tags;
}

nlohmann::json NerData::metrics(const ForwardOutputs& outputs) const {
  check(has_labels(), dataset_.source, "has no tags to score the predictions against");
  std::vector<std::vector<std::string>> references(size());
  for (size_t row = 0; row < size(); ++row) {
    for (int32_t label : features_.labels[row]) {
      if (label != kIgnoredLabel) {
        references[row].push_back(label_list_[static_cast<size_t>(label)]);
      }
    }
  }
  const SeqevalScores scores = seqeval_scores(references, predicted_tags(outputs));
  if (!entity_level_metrics_) {
    return {{"precision", scores.overall_precision},
            {"recall", scores.overall_recall},
            {"f1", scores.overall_f1},
            {"accuracy", scores.overall_accuracy}};
  }
  nlohmann::json out = {{"overall_precision", scores.overall_precision},
                        {"overall_recall", scores.overall_recall},
                        {"overall_f1", scores.overall_f1},
                        {"overall_accuracy", scores.overall_accuracy}};
  for (const auto& [type, type_scores] : scores.types) {
    out[type + "_precision"] = type_scores.precision;
    out[type + "_recall"] = type_scores.recall;
    out[type + "_f1"] = type_scores.f1;
    out[type + "_number"] = type_scores.number;
  }
  return out;
}

}  // namespace kiln
