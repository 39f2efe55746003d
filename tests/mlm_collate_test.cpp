// Language-modeling data and masked-LM batches: run_mlm.py's line split, line-by-line examples
// and concatenated blocks, and DataCollatorForLanguageModeling's masking statistics and rules
// (special tokens and padding never chosen, labels -100 elsewhere), drawn per epoch and example.
#include <gtest/gtest.h>

#include <fstream>
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

TEST(MlmCollate, MasksAsDataCollatorForLanguageModeling) {
  Tokenizer tokenizer = bert_tokenizer();
  TextLines text = read_text_lines(kRoot + "/data/lm/persuasion.txt");
  LmDataset data = lm_dataset(tokenizer, split_text_lines(text, 5).second, {64, true, 1000});
  CollateOptions options;
  options.batch_size = 32;
  options.max_seq_length = 64;
  MlmOptions mlm;
  mlm.mask_id = *tokenizer.token_to_id("[MASK]");
  mlm.vocab_size = tokenizer.vocab_size();
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
  Tokenizer tokenizer = bert_tokenizer();
  TextLines text = read_text_lines(kRoot + "/data/lm/persuasion.txt");
  LmDataset data = lm_dataset(tokenizer, split_text_lines(text, 5).second, {32, false, 1000});
  CollateOptions options;
  options.batch_size = 4;
  options.max_seq_length = 32;
  MlmOptions mlm;
  mlm.vocab_size = tokenizer.vocab_size();
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

}  // namespace
}  // namespace kiln
