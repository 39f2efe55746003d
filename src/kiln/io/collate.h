// Batches of static shape for classification: tokenized examples padded to a bucket length
// (or max_seq_length), a short last batch padded with ignored rows, so that a run compiles one
// program per bucket and never one per batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "kiln/io/dataset.h"
#include "kiln/io/tokenizer.h"
#include "kiln/ir/tensor.h"

namespace kiln {

// run_glue.py's tokenization: one text or a pair, special tokens, truncation (longest first)
// to max_seq_length, no padding (collate_batch pads).
std::vector<Encoding> encode_dataset(const Tokenizer& tokenizer, const ClassificationDataset& dataset,
                                     size_t max_seq_length);

struct CollateOptions {
  size_t batch_size = 8;        // rows of every batch (per_device_*_batch_size)
  size_t max_seq_length = 128;  // the largest bucket
  bool pad_to_max_length = false;  // one length for all batches
  size_t min_bucket = 16;          // the smallest bucket
  // None: the tokenizer has no padding token (GPT-2's), and a batch that needs padding fails.
  std::optional<int32_t> pad_id = 0;
  int32_t pad_type_id = 0;
  int32_t ignore_index = -100;          // the label of padding rows (cross_entropy skips them)
  DType index_dtype = DType::i32;  // ids, type ids, attention mask and class labels: i32 or i64
};

// Powers of two from min_bucket below max_seq_length, then max_seq_length itself:
// (128, 16) -> 16 32 64 128; (100, 16) -> 16 32 64 100; (8, 16) -> 8.
std::vector<size_t> bucket_lengths(size_t max_seq_length, size_t min_bucket = 16);
// The smallest bucket >= longest (max_seq_length with pad_to_max_length); an Error when longest
// exceeds max_seq_length.
size_t bucket_length(size_t longest, const CollateOptions& options);

struct Batch {
  // [batch_size, length] of options.index_dtype; padding positions and rows: pad id, pad type
  // id and attention mask 0.
  Tensor input_ids;
  Tensor token_type_ids;
  Tensor attention_mask;
  // [batch_size]: class ids of options.index_dtype (ignore_index on padding rows), or f32
  // regression targets (0 on padding rows: the loss must skip rows past real_examples);
  // none for a dataset without labels.
  std::optional<Tensor> labels;
  size_t length = 0;            // the bucket length
  size_t real_examples = 0;     // rows [0, real_examples) are examples, the rest padding
  std::vector<size_t> indices;  // the dataset index of each real row
};

// The inputs of the encodings `indices` (1 to batch_size of them) padded to their bucket, without
// labels; `where(i)` names encoding i in errors (an encoding longer than max_seq_length).
Batch collate_inputs(std::span<const Encoding> encodings, std::span<const size_t> indices,
                     const CollateOptions& options, const std::function<std::string(size_t)>& where);

// The batch of the examples `indices` (1 to batch_size of them) of `dataset`, whose
// tokenized forms are `encodings` (one per example, as encode_dataset makes them).
Batch collate_batch(std::span<const Encoding> encodings, const ClassificationDataset& dataset,
                    std::span<const size_t> indices, const CollateOptions& options);

// An epoch's order cut into batches of batch_size; the last one shorter (collate_batch pads
// it) unless drop_last (dataloader_drop_last) drops it.
std::vector<std::vector<size_t>> epoch_batches(std::span<const size_t> order, size_t batch_size,
                                               bool drop_last);

}  // namespace kiln
