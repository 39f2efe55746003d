// Causal-LM rows: blocks as inputs and labels, and next-token accuracy.
#include "kiln/train/clm_data.h"

#include "kiln/ir/error.h"

namespace kiln {
namespace {

template <typename Index>
void fill(const LmDataset& dataset, std::span<const size_t> rows, int32_t pad_id, Tensor& ids,
          Tensor& mask, Tensor& labels) {
  const auto cells = static_cast<size_t>(ids.numel());
  const size_t block = cells / static_cast<size_t>(ids.shape()[0]);
  Index* id = ids.data_as<Index>();
  Index* attend = mask.data_as<Index>();
  Index* label = labels.data_as<Index>();
  std::fill(id, id + cells, static_cast<Index>(pad_id));
  std::fill(attend, attend + cells, Index{0});
  std::fill(label, label + cells, Index{-100});
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::vector<int32_t>& tokens = dataset.examples.at(rows[r]).ids;
    for (size_t t = 0; t < block; ++t) {
      id[r * block + t] = label[r * block + t] = static_cast<Index>(tokens[t]);
      attend[r * block + t] = 1;
    }
  }
}

}  // namespace

ClmData::ClmData(LmDataset dataset) : dataset_(std::move(dataset)) {
  check(dataset_.size() > 0, dataset_.source, "no text blocks");
  block_ = dataset_.examples.front().size();
}

TensorMap ClmData::collate(std::span<const size_t> rows, const CollateOptions& options,
                           bool with_labels, int64_t /*epoch*/) const {
  // No rows is a batch of padding: a data-parallel replica past the end of the data.
  check(rows.size() <= options.batch_size, "collate", rows.size(), " blocks for a batch of ",
        options.batch_size);
  const Shape shape = {static_cast<int64_t>(options.batch_size), static_cast<int64_t>(block_)};
  Tensor ids(options.index_dtype, shape), mask(options.index_dtype, shape),
      labels(options.index_dtype, shape);
  const int32_t pad_id = options.pad_id.value_or(0);
  if (options.index_dtype == DType::i32) {
    fill<int32_t>(dataset_, rows, pad_id, ids, mask, labels);
  } else {
    fill<int64_t>(dataset_, rows, pad_id, ids, mask, labels);
  }
  TensorMap feeds = {{"input_ids", std::move(ids)}, {"attention_mask", std::move(mask)}};
  if (with_labels) feeds.emplace("labels", std::move(labels));
  return feeds;
}

nlohmann::json ClmData::metrics(const ForwardOutputs& outputs) const {
  check(outputs.rows.size() == 1 && outputs.rows[0].size() == dataset_.size(), dataset_.source,
        "expected one prediction row per block");
  int64_t correct = 0, total = 0;
  for (size_t r = 0; r < dataset_.size(); ++r) {
    const std::vector<float>& predicted = outputs.rows[0][r];
    const std::vector<int32_t>& tokens = dataset_.examples[r].ids;
    for (size_t t = 0; t + 1 < block_; ++t) {
      correct += static_cast<int32_t>(predicted[t]) == tokens[t + 1] ? 1 : 0;
      ++total;
    }
  }
  return {{"accuracy", static_cast<double>(correct) / static_cast<double>(total)}};
}

}  // namespace kiln
