// Classification batches: bucket choice, padding of rows and of the last batch, labels of each
// kind, epoch batching, and tokenizing a dataset with the real BERT vocabulary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/io/collate.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

template <typename Body>
std::string error_message(Body&& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

Encoding encoding_of(std::vector<int32_t> ids, int32_t type_id = 0) {
  Encoding encoding;
  encoding.type_ids.assign(ids.size(), type_id);
  encoding.attention_mask.assign(ids.size(), 1);
  encoding.ids = std::move(ids);
  return encoding;
}

// Three examples of lengths 3, 20 and 5, class labels 1, 0, 1, on lines 2-4 of "d.csv".
struct Fixture {
  ClassificationDataset dataset;
  std::vector<Encoding> encodings;

  Fixture() {
    dataset.source = "d.csv";
    dataset.texts = {"a", "b", "c"};
    dataset.lines = {2, 3, 4};
    dataset.label_kind = LabelKind::classes;
    dataset.label_ids = {1, 0, 1};
    dataset.label_names = {"neg", "pos"};
    std::vector<int32_t> long_ids(20, 7);
    long_ids.front() = 101;
    long_ids.back() = 102;
    encodings = {encoding_of({101, 5, 102}), encoding_of(long_ids), encoding_of({101, 8, 102, 9, 102}, 1)};
  }
};

std::vector<double> row(const Tensor& tensor, int64_t r) {
  std::vector<double> out;
  int64_t columns = tensor.shape()[1];
  for (int64_t c = 0; c < columns; ++c) out.push_back(tensor.get(r * columns + c));
  return out;
}

TEST(Buckets, PowersOfTwoThenMaxSeqLength) {
  EXPECT_EQ(bucket_lengths(128), (std::vector<size_t>{16, 32, 64, 128}));
  EXPECT_EQ(bucket_lengths(100), (std::vector<size_t>{16, 32, 64, 100}));
  EXPECT_EQ(bucket_lengths(16), (std::vector<size_t>{16}));
  EXPECT_EQ(bucket_lengths(8), (std::vector<size_t>{8}));
  EXPECT_EQ(bucket_lengths(512, 64), (std::vector<size_t>{64, 128, 256, 512}));
}

TEST(Buckets, SmallestBucketThatFits) {
  CollateOptions options;
  options.max_seq_length = 100;
  EXPECT_EQ(bucket_length(1, options), 16u);
  EXPECT_EQ(bucket_length(16, options), 16u);
  EXPECT_EQ(bucket_length(17, options), 32u);
  EXPECT_EQ(bucket_length(65, options), 100u);
  EXPECT_EQ(bucket_length(100, options), 100u);
  EXPECT_EQ(error_message([&] { bucket_length(101, options); }),
            "[collate] a sequence of 101 tokens is longer than max_seq_length 100");
  options.pad_to_max_length = true;
  EXPECT_EQ(bucket_length(3, options), 100u);
}

TEST(Collate, ShortLastBatchIsPaddedWithIgnoredRows) {
  Fixture f;
  CollateOptions options;
  options.batch_size = 4;
  std::vector<size_t> indices = {2, 0, 1};
  Batch batch = collate_batch(f.encodings, f.dataset, indices, options);
  EXPECT_EQ(batch.length, 32u);  // the longest example has 20 tokens
  EXPECT_EQ(batch.real_examples, 3u);
  EXPECT_EQ(batch.indices, indices);
  EXPECT_EQ(batch.input_ids.shape(), (Shape{4, 32}));
  EXPECT_EQ(batch.input_ids.dtype(), DType::i32);
  std::vector<double> first(32, 0.0);
  first[0] = 101, first[1] = 8, first[2] = 102, first[3] = 9, first[4] = 102;
  EXPECT_EQ(row(batch.input_ids, 0), first);
  std::vector<double> mask(32, 0.0);
  std::fill(mask.begin(), mask.begin() + 5, 1.0);
  EXPECT_EQ(row(batch.attention_mask, 0), mask);
  std::vector<double> types(32, 0.0);
  std::fill(types.begin(), types.begin() + 5, 1.0);
  EXPECT_EQ(row(batch.token_type_ids, 0), types);
  EXPECT_EQ(row(batch.attention_mask, 1)[3], 0.0);
  EXPECT_EQ(row(batch.attention_mask, 2)[19], 1.0);
  EXPECT_EQ(row(batch.attention_mask, 2)[20], 0.0);
  // The padding row: pad ids, no attention, ignored label.
  EXPECT_EQ(row(batch.input_ids, 3), std::vector<double>(32, 0.0));
  EXPECT_EQ(row(batch.attention_mask, 3), std::vector<double>(32, 0.0));
  ASSERT_TRUE(batch.labels.has_value());
  EXPECT_EQ(batch.labels->dtype(), DType::i32);
  EXPECT_EQ(batch.labels->to_doubles(), (std::vector<double>{1, 1, 0, -100}));
}

TEST(Collate, PadIdsDtypeAndMaxLength) {
  Fixture f;
  CollateOptions options;
  options.batch_size = 2;
  options.max_seq_length = 64;
  options.pad_to_max_length = true;
  options.pad_id = 3;
  options.index_dtype = DType::i64;
  std::vector<size_t> indices = {0};
  Batch batch = collate_batch(f.encodings, f.dataset, indices, options);
  EXPECT_EQ(batch.input_ids.shape(), (Shape{2, 64}));
  EXPECT_EQ(batch.input_ids.dtype(), DType::i64);
  EXPECT_EQ(batch.labels->dtype(), DType::i64);
  EXPECT_EQ(batch.input_ids.get(2), 102.0);
  EXPECT_EQ(batch.input_ids.get(3), 3.0);
  EXPECT_EQ(batch.input_ids.get(64), 3.0);
  EXPECT_EQ(batch.labels->to_doubles(), (std::vector<double>{1, -100}));
}

TEST(Collate, RegressionAndUnlabelledDatasets) {
  Fixture f;
  CollateOptions options;
  options.batch_size = 3;
  f.dataset.label_kind = LabelKind::regression;
  f.dataset.label_ids.clear();
  f.dataset.label_values = {0.5f, 2.0f, -1.25f};
  std::vector<size_t> indices = {1, 2};
  Batch regression = collate_batch(f.encodings, f.dataset, indices, options);
  EXPECT_EQ(regression.labels->dtype(), DType::f32);
  EXPECT_EQ(regression.labels->to_doubles(), (std::vector<double>{2.0, -1.25, 0.0}));
  f.dataset.label_kind = LabelKind::none;
  Batch unlabelled = collate_batch(f.encodings, f.dataset, indices, options);
  EXPECT_FALSE(unlabelled.labels.has_value());
  EXPECT_EQ(unlabelled.real_examples, 2u);
}

TEST(Collate, Errors) {
  Fixture f;
  CollateOptions options;
  options.batch_size = 2;
  options.max_seq_length = 16;
  std::vector<size_t> too_long = {1};
  EXPECT_EQ(error_message([&] { collate_batch(f.encodings, f.dataset, too_long, options); }),
            "[d.csv:3] example has 20 tokens, more than max_seq_length 16 (tokenize with truncation)");
  std::vector<size_t> too_many = {0, 2, 0};
  EXPECT_EQ(error_message([&] { collate_batch(f.encodings, f.dataset, too_many, options); }),
            "[collate] 3 examples for a batch of 2");
  // A tokenizer without a padding token (GPT-2's) cannot pad, as in transformers.
  options.max_seq_length = 64;
  options.pad_id.reset();
  std::vector<size_t> one = {0};
  EXPECT_EQ(error_message([&] { collate_batch(f.encodings, f.dataset, one, options); }),
            "[collate] this batch needs padding and the tokenizer has no padding token (as "
            "GPT-2's): give it one in its tokenizer_config.json (\"pad_token\", e.g. its eos "
            "token)");
}

TEST(EpochBatches, LastBatchKeptOrDropped) {
  std::vector<size_t> order = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  auto batches = epoch_batches(order, 4, false);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::vector<size_t>{9, 8, 7, 6}));
  EXPECT_EQ(batches[2], (std::vector<size_t>{1, 0}));
  auto dropped = epoch_batches(order, 4, true);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped[1], (std::vector<size_t>{5, 4, 3, 2}));
  EXPECT_EQ(epoch_batches(order, 5, true).size(), 2u);
}

TEST(EncodeDataset, RunGlueTokenizationWithTheBertVocabulary) {
  Tokenizer tokenizer =
      tokenizer_load_vocab(std::string(KILN_SOURCE_DIR) + "/data/vocab/bert-base-uncased-vocab.txt");
  ClassificationDataset dataset;
  dataset.texts = {"Hello world", "the the the the the the the the the the"};
  std::vector<Encoding> single = encode_dataset(tokenizer, dataset, 8);
  ASSERT_EQ(single.size(), 2u);
  EXPECT_EQ(single[0].ids, (std::vector<int32_t>{101, 7592, 2088, 102}));
  EXPECT_EQ(single[1].ids, (std::vector<int32_t>{101, 1996, 1996, 1996, 1996, 1996, 1996, 102}));
  dataset.text_pair_column = "pair";
  dataset.text_pairs = {"world", "hello"};
  std::vector<Encoding> pairs = encode_dataset(tokenizer, dataset, 8);
  EXPECT_EQ(pairs[0].ids, (std::vector<int32_t>{101, 7592, 2088, 102, 2088, 102}));
  EXPECT_EQ(pairs[0].type_ids, (std::vector<int32_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(pairs[1].ids.size(), 8u);  // longest_first trims the long text
  EXPECT_EQ(pairs[1].ids[6], 7592);
}

}  // namespace
}  // namespace kiln
