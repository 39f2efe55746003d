// Dropout keyed per example (random_bits with one key per leading row): dropout_row_keys, and the
// replica property that a batch's rows [a, b), fed their own keys, draw exactly the masks those
// rows draw in the whole batch, for the dropout op on the reference and CPU backends and for
// BERT's training logits.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert.h"
#include "kiln/train/dropout_keys.h"
#include "support/testing.h"

namespace kiln {
namespace {

// Rows [a, b) of `t` along its leading dim.
Tensor rows_of(const Tensor& t, int64_t a, int64_t b) {
  Shape shape = t.shape();
  size_t row_bytes = t.nbytes() / static_cast<size_t>(shape[0]);
  shape[0] = b - a;
  Tensor out(t.dtype(), shape);
  std::memcpy(out.data(), t.data() + static_cast<size_t>(a) * row_bytes,
              static_cast<size_t>(b - a) * row_bytes);
  return out;
}

TEST(DropoutRowKeys, KeysAreTheRowsOfTheGlobalBatch) {
  Tensor keys = dropout_row_keys(7, 8, 2, 3);
  EXPECT_EQ(keys.dtype(), DType::i64);
  EXPECT_EQ(keys.shape(), (Shape{3}));
  EXPECT_EQ(keys.to_doubles(), (std::vector<double>{58, 59, 60}));
  // Replica 1 of 4 dealt rows 1, 5 of a global batch of 8.
  EXPECT_EQ(dropout_row_keys(7, 8, 1, 2, 4).to_doubles(), (std::vector<double>{57, 61}));
  EXPECT_EQ(testing::error_of([] { dropout_row_keys(0, 8, 1, 3, 4); }),
            "[dropout_row_keys] 3 rows from 1 every 4 are not within the global batch of 8");
  // Exact beyond 2^53.
  Tensor big = dropout_row_keys(int64_t{1} << 50, 64, 63, 1);
  EXPECT_EQ(big.data_as<int64_t>()[0], (int64_t{1} << 56) + 63);
  EXPECT_EQ(testing::error_of([] { dropout_row_keys(0, 4, 3, 2); }),
            "[dropout_row_keys] 2 rows from 3 every 1 are not within the global batch of 4");
  EXPECT_EQ(testing::error_of([] { dropout_row_keys(-1, 4, 0, 4); }),
            "[dropout_row_keys] micro-step -1 and global batch size 4 must be >= 0 and > 0");
}

// Dropout of x [rows, ...] keyed by dropout_row_keys(micro_step, batch, first, rows), on `backend`.
Tensor dropped(Backend& backend, const Tensor& x, int64_t micro_step, int64_t batch,
               int64_t first) {
  Graph graph;
  int64_t rows = x.shape()[0];
  Value input = graph.input("x", x.dtype(), x.shape());
  Value seed = graph.input("seed", DType::i64, {});
  Value offset = graph.input("offset", DType::i64, {rows});
  Value out = dropout(input * 1.5, seed, offset, 0.4, 3);
  return backend.compile(graph, {out})
      ->run({x, Tensor::scalar(DType::i64, 99), dropout_row_keys(micro_step, batch, first, rows)})
      .at(0);
}

TEST(DropoutRows, ReplicaRowsDrawTheMasksOfTheWholeBatch) {
  std::mt19937_64 rng(3);
  auto reference = make_reference_backend();
  auto cpu = make_cpu_backend();
  // Rows of 6 * 5 elements (not a multiple of 4) and of 4 * 64.
  for (const Shape& shape : {Shape{8, 6, 5}, Shape{8, 4, 64}}) {
    Tensor x = testing::random_tensor(rng, DType::f32, shape);
    for (Backend* backend : {reference.get(), cpu.get()}) {
      Tensor whole = dropped(*backend, x, 5, 8, 0);
      for (auto [a, b] : {std::pair<int64_t, int64_t>{0, 4}, {4, 8}, {3, 6}, {7, 8}}) {
        SCOPED_TRACE(shape_str(shape) + " rows " + std::to_string(a) + ".." + std::to_string(b));
        EXPECT_EQ(dropped(*backend, rows_of(x, a, b), 5, 8, a).to_doubles(),
                  rows_of(whole, a, b).to_doubles());
      }
    }
  }
}

// BERT's training forward keeps examples apart (attention within a row, layer norm per token), so
// with per-example masks the logits of rows [a, b) built as a batch of their own equal the whole
// batch's rows.
TEST(DropoutRows, BertTrainingLogitsOfReplicaRowsMatchTheWholeBatch) {
  constexpr int64_t kBatch = 4, kSeq = 8;
  BertConfig config = bert_config_preset("tiny");
  std::mt19937_64 rng(9);
  std::map<std::string, Tensor> feeds = {
      {"input_ids", testing::random_integers(rng, DType::i64, {kBatch, kSeq}, 0, 1000)},
      {"token_type_ids", testing::random_integers(rng, DType::i64, {kBatch, kSeq}, 0, 2)},
      {"attention_mask", testing::random_integers(rng, DType::i64, {kBatch, kSeq}, 0, 2)},
      {"dropout_seed", Tensor::scalar(DType::i64, 17)}};
  auto logits = [&](int64_t a, int64_t b) {
    Graph graph;
    BertClassifier model = bert_for_sequence_classification(
        graph, config,
        {.batch_size = b - a, .seq_len = kSeq, .training = true, .with_labels = false});
    model.params.initialize(7);
    std::map<std::string, Tensor> rows;
    for (const char* name : {"input_ids", "token_type_ids", "attention_mask"}) {
      rows[name] = rows_of(feeds.at(name), a, b);
    }
    rows["dropout_seed"] = feeds.at("dropout_seed");
    rows["dropout_offset"] = dropout_row_keys(11, kBatch, a, b - a);
    return evaluate_reference(graph, {model.logits}, model.params.arguments(rows))[0];
  };
  Tensor whole = logits(0, kBatch);
  for (auto [a, b] : {std::pair<int64_t, int64_t>{0, 2}, {2, 4}, {1, 2}}) {
    SCOPED_TRACE("rows " + std::to_string(a) + ".." + std::to_string(b));
    EXPECT_ALLCLOSE(logits(a, b), rows_of(whole, a, b), 1e-6, 1e-6);
  }
}

}  // namespace
}  // namespace kiln
