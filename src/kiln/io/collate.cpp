// Tokenizing a dataset, bucket choice and padding of classification batches.
#include "kiln/io/collate.h"

#include <algorithm>
#include <string_view>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

std::vector<std::string_view> views(const std::vector<std::string>& texts) {
  return {texts.begin(), texts.end()};
}

template <typename Index>
void fill_inputs(Batch& batch, std::span<const Encoding> encodings, const CollateOptions& options) {
  auto* ids = batch.input_ids.data_as<Index>();
  auto* type_ids = batch.token_type_ids.data_as<Index>();
  auto* mask = batch.attention_mask.data_as<Index>();
  size_t cells = options.batch_size * batch.length;
  const bool padded = batch.indices.size() < options.batch_size ||
                      std::any_of(batch.indices.begin(), batch.indices.end(), [&](size_t index) {
                        return encodings[index].ids.size() < batch.length;
                      });
  check(options.pad_id || !padded, "collate",
        "this batch needs padding and the tokenizer has no padding token (as GPT-2's): give it "
        "one in its tokenizer_config.json (\"pad_token\", e.g. its eos token)");
  std::fill(ids, ids + cells, static_cast<Index>(options.pad_id.value_or(0)));
  std::fill(type_ids, type_ids + cells, static_cast<Index>(options.pad_type_id));
  for (size_t row = 0; row < batch.indices.size(); ++row) {
    const Encoding& encoding = encodings[batch.indices[row]];
    size_t base = row * batch.length;
    for (size_t t = 0; t < encoding.ids.size(); ++t) {
      ids[base + t] = static_cast<Index>(encoding.ids[t]);
      type_ids[base + t] = static_cast<Index>(encoding.type_ids[t]);
      mask[base + t] = encoding.attention_mask.empty() ? 1 : static_cast<Index>(encoding.attention_mask[t]);
    }
  }
}

template <typename Out, typename In>
void fill_labels(Tensor& labels, const std::vector<size_t>& indices, const std::vector<In>& values,
                 Out padding) {
  auto* out = labels.data_as<Out>();
  std::fill(out, out + labels.numel(), padding);
  for (size_t row = 0; row < indices.size(); ++row) out[row] = static_cast<Out>(values[indices[row]]);
}

}  // namespace

std::vector<Encoding> encode_dataset(const Tokenizer& tokenizer, const ClassificationDataset& dataset,
                                     size_t max_seq_length) {
  EncodeOptions options;
  options.truncation = Truncation::longest_first;
  options.max_length = max_seq_length;
  std::vector<std::string_view> texts = views(dataset.texts);
  if (!dataset.has_pairs()) return tokenizer.encode_batch(texts, options);
  std::vector<std::string_view> pairs = views(dataset.text_pairs);
  return tokenizer.encode_pair_batch(texts, pairs, options);
}

std::vector<size_t> bucket_lengths(size_t max_seq_length, size_t min_bucket) {
  check(max_seq_length > 0 && min_bucket > 0, "collate", "max_seq_length ", max_seq_length,
        " and the smallest bucket ", min_bucket, " must be positive");
  std::vector<size_t> buckets;
  for (size_t length = min_bucket; length < max_seq_length; length *= 2) buckets.push_back(length);
  buckets.push_back(max_seq_length);
  return buckets;
}

size_t bucket_length(size_t longest, const CollateOptions& options) {
  check(longest <= options.max_seq_length, "collate", "a sequence of ", longest,
        " tokens is longer than max_seq_length ", options.max_seq_length);
  if (options.pad_to_max_length) return options.max_seq_length;
  for (size_t length : bucket_lengths(options.max_seq_length, options.min_bucket)) {
    if (length >= longest) return length;
  }
  return options.max_seq_length;
}

Batch collate_inputs(std::span<const Encoding> encodings, std::span<const size_t> indices,
                     const CollateOptions& options, const std::function<std::string(size_t)>& where) {
  // No examples is a batch of padding rows: a data-parallel replica past the end of the data.
  check(indices.size() <= options.batch_size, "collate", indices.size(),
        " examples for a batch of ", options.batch_size);
  check(options.index_dtype == DType::i32 || options.index_dtype == DType::i64, "collate",
        "index dtype must be i32 or i64");
  Batch batch;
  batch.indices.assign(indices.begin(), indices.end());
  batch.real_examples = indices.size();
  size_t longest = 0;
  for (size_t index : indices) {
    check(index < encodings.size(), "collate", "example index ", index, " out of range (",
          encodings.size(), " examples)");
    const Encoding& encoding = encodings[index];
    check(encoding.type_ids.size() == encoding.ids.size() &&
              (encoding.attention_mask.empty() || encoding.attention_mask.size() == encoding.ids.size()),
          where(index), "encoding with ", encoding.ids.size(), " ids, ",
          encoding.type_ids.size(), " type ids and ", encoding.attention_mask.size(), " mask values");
    check(encoding.ids.size() <= options.max_seq_length, where(index), "example has ",
          encoding.ids.size(), " tokens, more than max_seq_length ", options.max_seq_length,
          " (tokenize with truncation)");
    longest = std::max(longest, encoding.ids.size());
  }
  batch.length = bucket_length(longest, options);
  Shape shape = {static_cast<int64_t>(options.batch_size), static_cast<int64_t>(batch.length)};
  batch.input_ids = Tensor(options.index_dtype, shape);
  batch.token_type_ids = Tensor(options.index_dtype, shape);
  batch.attention_mask = Tensor(options.index_dtype, shape);
  if (options.index_dtype == DType::i32) {
    fill_inputs<int32_t>(batch, encodings, options);
  } else {
    fill_inputs<int64_t>(batch, encodings, options);
  }
  return batch;
}

Batch collate_batch(std::span<const Encoding> encodings, const ClassificationDataset& dataset,
                    std::span<const size_t> indices, const CollateOptions& options) {
  check(encodings.size() == dataset.size(), "collate", encodings.size(), " encodings for ",
        dataset.size(), " examples of ", dataset.source);
  Batch batch = collate_inputs(encodings, indices, options,
                               [&](size_t index) { return dataset.where(index); });

  Shape rows = {static_cast<int64_t>(options.batch_size)};
  if (dataset.label_kind == LabelKind::classes) {
    batch.labels = Tensor(options.index_dtype, rows);
    if (options.index_dtype == DType::i32) {
      fill_labels<int32_t>(*batch.labels, batch.indices, dataset.label_ids, options.ignore_index);
    } else {
      fill_labels<int64_t>(*batch.labels, batch.indices, dataset.label_ids, options.ignore_index);
    }
  } else if (dataset.label_kind == LabelKind::regression) {
    batch.labels = Tensor(DType::f32, rows);
    fill_labels<float>(*batch.labels, batch.indices, dataset.label_values, 0.0f);
  } else if (dataset.label_kind == LabelKind::multi_label) {
    // Multi-hot float targets, as run_classification.py's multi_labels_to_ids; padding rows 0.
    const auto labels = static_cast<int64_t>(dataset.label_names.size());
    batch.labels = Tensor(DType::f32, {static_cast<int64_t>(options.batch_size), labels});
    auto* out = batch.labels->data_as<float>();
    for (size_t row = 0; row < batch.indices.size(); ++row) {
      for (int32_t id : dataset.label_sets[batch.indices[row]]) {
        out[static_cast<int64_t>(row) * labels + id] = 1.0f;
      }
    }
  }
  return batch;
}

std::vector<std::vector<size_t>> epoch_batches(std::span<const size_t> order, size_t batch_size,
                                               bool drop_last) {
  check(batch_size > 0, "collate", "batch size must be positive");
  std::vector<std::vector<size_t>> batches;
  for (size_t start = 0; start < order.size(); start += batch_size) {
    size_t end = std::min(order.size(), start + batch_size);
    if (drop_last && end - start < batch_size) break;
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                         order.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return batches;
}

}  // namespace kiln
