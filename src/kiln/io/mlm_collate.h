// Masked-LM batches as DataCollatorForLanguageModeling makes them: of the tokens that are neither
// special nor padding, each is chosen with mlm_probability; a chosen token is predicted (its
// label is its id, every other label -100) and replaced by [MASK] (80%), by a random token of
// the vocabulary (10%) or left as it is (10%). The draws come from the counter-based Philox
// generator keyed by (seed, epoch, example, position), so they change every epoch, do not depend
// on the batch an example lands in, and a resumed run draws the same masks.
#pragma once

#include <cstdint>
#include <span>

#include "kiln/io/collate.h"
#include "kiln/io/lm_dataset.h"

namespace kiln {

struct MlmOptions {
  double mlm_probability = 0.15;
  int32_t mask_id = 103;
  int32_t vocab_size = 30522;  // random replacements are drawn from [0, vocab_size): len(tokenizer)
  int64_t seed = 42;
};

struct MlmBatch {
  Batch inputs;  // input_ids with the replacements made
  Tensor labels;  // [batch_size, length] of the index dtype: ids at chosen tokens, else -100
};

// Epoch `epoch` of training (evaluation passes a fixed key, e.g. -1, for the same masks each time).
MlmBatch collate_mlm_batch(const LmDataset& dataset, std::span<const size_t> indices,
                           const CollateOptions& options, const MlmOptions& mlm, int64_t epoch);

}  // namespace kiln
