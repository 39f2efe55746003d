// Language-modeling data and masked-LM batches: run_mlm.py's line split, line-by-line examples
// and concatenated blocks, and DataCollatorForLanguageModeling's masking statistics and rules
// (special tokens and padding never chosen, labels -100 elsewhere), drawn per epoch and example;
// the labels compacted to the predicted positions, within a capacity per batch shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "kiln/io/mlm_collate.h"
#include "kiln/io/tokenizer_files.h"
#include "support/testing.h"

namespace kiln {
namespace {

const std::string kRoot = std::string(KILN_SOURCE_DIR);

Tokenizer bert_tokenizer() { return tokenizer_load_vocab(kRoot + "/data/vocab/bert-base-uncased-vocab.txt"); }

TEST(LmDataset, ReadsLinesAndSplitsAsRunMlm) {
  auto path = testing::scratch_folder() / "text.txt";
  std::ofstream(path) << "one\r\n\n  \nfour\n";
  TextLines text = read_text_lines(path.string());
  EXPECT_EQ(text.lines, (std::vector<std::string>{"one", "", "  ", "four"}));
  EXPECT_EQ(text.line_numbers, (std::vector<size_t>{1, 2, 3, 4}));
  auto [validation, train] = split_text_lines(text, 50);
  EXPECT_EQ(validation.lines, (std::vector<std::string>{"one", ""}));
  EXPECT_EQ(train.line_numbers, (std::vector<size_t>{3, 4}));
  LmDataset by_line = lm_dataset(bert_tokenizer(), text, {8, true, 1000});
  ASSERT_EQ(by_line.size(), 2u);  // blank lines dropped
  EXPECT_EQ(by_line.where(1), path.string() + ":4");
  EXPECT_EQ(by_line.examples[1].special_tokens_mask, (std::vector<int32_t>{1, 0, 1}));
}

TEST(LmDataset, GroupsTextsIntoBlocksPerThousandLines) {
  // The counts run_mlm.py gives for Persuasion with BertTokenizerFast: the train part after the
  // first 5% of 8,328 lines; group_texts' blocks of 128 per 1,000 lines, and the non-blank lines
  // (computed once in Python with the same tokenizer and slicing).
  TextLines text = read_text_lines(kRoot + "/data/lm/persuasion.txt");
  ASSERT_EQ(text.lines.size(), 8328u);
  auto [validation, train] = split_text_lines(text, 5);
  EXPECT_EQ(validation.lines.size(), 416u);
  Tokenizer tokenizer = bert_tokenizer();
  LmDataset blocks = lm_dataset(tokenizer, train, {128, false, 1000});
  EXPECT_EQ(blocks.size(), 893u);
  for (const Encoding& block : blocks.examples) ASSERT_EQ(block.size(), 128u);
  EXPECT_EQ(blocks.examples[0].ids[0], *tokenizer.token_to_id("[CLS]"));
  EXPECT_EQ(lm_dataset(tokenizer, train, {128, true, 1000}).size(), 6843u);
}

struct Counts {
  size_t eligible = 0, chosen = 0, masked = 0, random = 0, kept = 0;
};

// Persuasion's train part (after the first 5% of the lines) as masked-LM examples of `length`
// tokens, batched by `batch_size`, masked with BERT's vocabulary.
struct PersuasionMasking {
  LmDataset data;
  CollateOptions options;
  MlmOptions mlm;
};

PersuasionMasking persuasion_masking(size_t length, bool line_by_line, size_t batch_size) {
  Tokenizer tokenizer = bert_tokenizer();
  TextLines text = read_text_lines(kRoot + "/data/lm/persuasion.txt");
  PersuasionMasking out{
      lm_dataset(tokenizer, split_text_lines(text, 5).second, {length, line_by_line, 1000}), {}, {}};
  out.options.batch_size = batch_size;
  out.options.max_seq_length = length;
  out.mlm.mask_id = *tokenizer.token_to_id("[MASK]");
  out.mlm.vocab_size = tokenizer.vocab_size();
  return out;
}

TEST(MlmCollate, MasksAsDataCollatorForLanguageModeling) {
  auto [data, options, mlm] = persuasion_masking(64, true, 32);
  Counts counts;
  for (size_t first = 0; first + 32 <= 3200; first += 32) {
    std::vector<size_t> rows;
    for (size_t i = first; i < first + 32; ++i) rows.push_back(i);
    MlmBatch batch = collate_mlm_batch(data, rows, options, mlm, /*epoch=*/0);
    const size_t length = batch.inputs.length;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Encoding& example = data.examples[rows[r]];
      for (size_t t = 0; t < length; ++t) {
        const size_t cell = r * length + t;
        const auto label = static_cast<int32_t>(batch.labels.get(static_cast<int64_t>(cell)));
        const auto id = static_cast<int32_t>(batch.inputs.input_ids.get(static_cast<int64_t>(cell)));
        const bool special = t >= example.size() || example.special_tokens_mask[t] != 0;
        if (special) {
          ASSERT_EQ(label, -100) << "special or padding token chosen";
          continue;
        }
        ++counts.eligible;
        if (label == -100) {
          ASSERT_EQ(id, example.ids[t]);
          continue;
        }
        ++counts.chosen;
        ASSERT_EQ(label, example.ids[t]);
        if (id == mlm.mask_id) {
          ++counts.masked;
        } else if (id == example.ids[t]) {
          ++counts.kept;
        } else {
          ++counts.random;
        }
      }
    }
  }
  const auto rate = [](size_t part, size_t whole) {
    return static_cast<double>(part) / static_cast<double>(whole);
  };
  ASSERT_GT(counts.eligible, 40000u);
  EXPECT_NEAR(rate(counts.chosen, counts.eligible), 0.15, 0.005);
  EXPECT_NEAR(rate(counts.masked, counts.chosen), 0.8, 0.015);
  EXPECT_NEAR(rate(counts.random, counts.chosen), 0.1, 0.01);
  EXPECT_NEAR(rate(counts.kept, counts.chosen), 0.1, 0.01);
}

TEST(MlmCollate, MasksChangeEachEpochAndNotWithTheBatch) {
  auto [data, options, mlm] = persuasion_masking(32, false, 4);
  std::vector<size_t> ab = {5, 9}, ba = {9, 5};
  MlmBatch first = collate_mlm_batch(data, ab, options, mlm, 0);
  MlmBatch again = collate_mlm_batch(data, ba, options, mlm, 0);
  MlmBatch next_epoch = collate_mlm_batch(data, ab, options, mlm, 1);
  bool differs = false;
  for (int64_t t = 0; t < 32; ++t) {
    EXPECT_EQ(first.labels.get(t), again.labels.get(32 + t));        // example 5
    EXPECT_EQ(first.labels.get(32 + t), again.labels.get(t));        // example 9
    EXPECT_EQ(first.inputs.input_ids.get(t), again.inputs.input_ids.get(32 + t));
    differs |= first.labels.get(t) != next_epoch.labels.get(t);
  }
  EXPECT_TRUE(differs);
  // Padding rows: no labels.
  for (int64_t cell = 64; cell < 128; ++cell) EXPECT_EQ(first.labels.get(cell), -100.0);
  mlm.mlm_probability = 1.5;
  EXPECT_NE(testing::error_of([&] { collate_mlm_batch(data, ab, options, mlm, 0); })
                .find("--mlm_probability"),
            std::string::npos);
}

TEST(MlmPredictions, CapacityCoversTheChosenTokensOfAnyBatch) {
  // 4,096 cells at 0.15: mean 614.4, sd 22.85; +8 sd, rounded up to a multiple of 8.
  EXPECT_EQ(mlm_prediction_capacity(4096, 0.15), 800);
  EXPECT_EQ(mlm_prediction_capacity(4096, 1.0), 4096);  // at most every cell
  EXPECT_EQ(mlm_prediction_capacity(4096, 0.0), 8);
  EXPECT_EQ(mlm_prediction_capacity(3, 0.15), 3);
  // Every batch of the Persuasion blocks fits (and the capacity is far below the cells).
  auto [data, options, mlm] = persuasion_masking(128, false, 32);
  const int64_t capacity = mlm_prediction_capacity(32 * 128, mlm.mlm_probability);
  int64_t most = 0;
  for (size_t first = 0; first + 32 <= data.size(); first += 32) {
    std::vector<size_t> rows(32);
    std::iota(rows.begin(), rows.end(), first);
    Tensor labels = collate_mlm_batch(data, rows, options, mlm, 0).labels;
    int64_t chosen = 0;
    for (int64_t i = 0; i < labels.numel(); ++i) chosen += labels.get(i) != -100;
    most = std::max(most, chosen);
  }
  EXPECT_GT(most, 500);
  EXPECT_LT(most, capacity - 100);
}

TEST(MlmPredictions, CompactsLabelsInRowMajorOrderThenPads) {
  Tensor labels = Tensor::from_doubles(DType::i32, {2, 4}, {-100, 7, -100, -100, 9, -100, -100, 3});
  MlmPredictions predictions = compact_mlm_labels(labels, 5, "batch");
  EXPECT_EQ(predictions.positions.dtype(), DType::i32);
  EXPECT_EQ(predictions.positions.to_doubles(), (std::vector<double>{1, 4, 7, 0, 0}));
  EXPECT_EQ(predictions.labels.to_doubles(), (std::vector<double>{7, 9, 3, -100, -100}));
  try {
    compact_mlm_labels(labels, 2, "data/lm/x.txt:10 (the batch starting there)");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("data/lm/x.txt:10"), std::string::npos) << message;
    EXPECT_NE(message.find("more than 2 tokens chosen"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kiln
