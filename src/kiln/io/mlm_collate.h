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

// The predicted tokens of a batch, for a head that computes logits only where there is a label
// (the decoder over the vocabulary is most of a small model's step): their flat positions in
// [batch * length] and their labels, in row-major order, then padding (position 0, label -100)
// up to a capacity fixed by the batch shape, so that every batch of a shape runs one program.
struct MlmPredictions {
  Tensor positions;  // [capacity] of the labels' dtype
  Tensor labels;     // [capacity]
};

// The capacity for `tokens` = batch * length cells: the expected number of chosen tokens plus
// eight standard deviations (rounded up to a multiple of 8, at most `tokens`), so that a batch
// exceeding it is never seen in practice.
int64_t mlm_prediction_capacity(int64_t tokens, double mlm_probability);

// Compacts `labels` ([batch, length], -100 where nothing is predicted); more predicted tokens
// than `capacity` is an Error naming `where`.
MlmPredictions compact_mlm_labels(const Tensor& labels, int64_t capacity, std::string_view where);

}  // namespace kiln
