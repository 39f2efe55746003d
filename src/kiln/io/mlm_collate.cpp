// DataCollatorForLanguageModeling's torch_mask_tokens with Philox draws per (example, position).
#include "kiln/io/mlm_collate.h"

#include <algorithm>
#include <cmath>

#include "kiln/ir/error.h"
#include "kiln/ir/philox.h"

namespace kiln {
namespace {

// A Philox stream of its own, apart from the dropout streams of the model graphs.
constexpr uint32_t kMlmStream = 0x4D4C4D00;  // "MLM\0"

double uniform(uint32_t bits) { return static_cast<double>(bits) * 0x1p-32; }

template <typename Index>
void mask_tokens(MlmBatch& batch, const LmDataset& dataset, const CollateOptions& options,
                 const MlmOptions& mlm, int64_t epoch) {
  auto* ids = batch.inputs.input_ids.template data_as<Index>();
  auto* labels = batch.labels.template data_as<Index>();
  const size_t length = batch.inputs.length;
  std::fill(labels, labels + batch.labels.numel(), static_cast<Index>(-100));
  for (size_t row = 0; row < batch.inputs.indices.size(); ++row) {
    const size_t example = batch.inputs.indices[row];
    const Encoding& encoding = dataset.examples[example];
    for (size_t t = 0; t < encoding.size(); ++t) {
      if (encoding.special_tokens_mask[t] != 0) continue;
      // Four words of one Philox block per token: chosen?, [MASK]?, random?, which token.
      const auto block = static_cast<int64_t>((example * options.max_seq_length + t) * 4);
      auto draw = [&](int k) { return random_bits_at(mlm.seed, epoch, kMlmStream, block + k); };
      if (uniform(draw(0)) >= mlm.mlm_probability) continue;
      const size_t cell = row * length + t;
      labels[cell] = static_cast<Index>(encoding.ids[t]);
      if (uniform(draw(1)) < 0.8) {
        ids[cell] = static_cast<Index>(mlm.mask_id);
      } else if (uniform(draw(2)) < 0.5) {
        const auto word = (static_cast<uint64_t>(draw(3)) * static_cast<uint64_t>(mlm.vocab_size)) >> 32;
        ids[cell] = static_cast<Index>(word);
      }
    }
  }
}

}  // namespace

MlmBatch collate_mlm_batch(const LmDataset& dataset, std::span<const size_t> indices,
                           const CollateOptions& options, const MlmOptions& mlm, int64_t epoch) {
  check(mlm.mlm_probability >= 0.0 && mlm.mlm_probability <= 1.0, "--mlm_probability",
        mlm.mlm_probability, " is not a probability");
  check(mlm.vocab_size > 0, "mlm", "the vocabulary is empty");
  MlmBatch batch;
  batch.inputs = collate_inputs(dataset.examples, indices, options,
                                [&](size_t i) { return dataset.where(i); });
  for (size_t index : indices) {
    check(dataset.examples[index].special_tokens_mask.size() == dataset.examples[index].size(),
          dataset.where(index), "the example has no special-tokens mask");
  }
  batch.labels = Tensor(options.index_dtype, batch.inputs.input_ids.shape());
  if (options.index_dtype == DType::i32) {
    mask_tokens<int32_t>(batch, dataset, options, mlm, epoch);
  } else {
    mask_tokens<int64_t>(batch, dataset, options, mlm, epoch);
  }
  return batch;
}

int64_t mlm_prediction_capacity(int64_t tokens, double mlm_probability) {
  const double p = std::clamp(mlm_probability, 0.0, 1.0);
  const auto n = static_cast<double>(tokens);
  const double bound = n * p + 8.0 * std::sqrt(n * p * (1.0 - p)) + 1.0;
  const int64_t rounded = (static_cast<int64_t>(std::ceil(bound)) + 7) / 8 * 8;
  return std::clamp<int64_t>(rounded, 1, std::max<int64_t>(tokens, 1));
}

MlmPredictions compact_mlm_labels(const Tensor& labels, int64_t capacity, std::string_view where) {
  MlmPredictions out{Tensor(labels.dtype(), {capacity}), Tensor(labels.dtype(), {capacity})};
  int64_t count = 0;
  for (int64_t cell = 0; cell < labels.numel(); ++cell) {
    const double label = labels.get(cell);
    if (label == -100) continue;
    check(count < capacity, where, "more than ", capacity,
          " tokens chosen for prediction in one batch (the capacity for its shape at this "
          "--mlm_probability)");
    out.positions.set(count, static_cast<double>(cell));
    out.labels.set(count, label);
    ++count;
  }
  for (int64_t k = count; k < capacity; ++k) {
    out.positions.set(k, 0.0);
    out.labels.set(k, -100.0);
  }
  return out;
}

}  // namespace kiln
