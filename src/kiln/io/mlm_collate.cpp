// DataCollatorForLanguageModeling's torch_mask_tokens with Philox draws per (example, position).
#include "kiln/io/mlm_collate.h"

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

}  // namespace kiln
