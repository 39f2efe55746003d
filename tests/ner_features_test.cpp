// Token classification data against run_ner.py (fixtures by
// tests/fixtures_gen/make_ner_fixtures.py): word lists tokenized as is_split_into_words (ids and
// word_ids of transformers' WordPiece and RoBERTa byte-level tokenizers),
// tokenize_and_align_labels with and without --label_all_tokens, and compute_metrics' tags at
// the labelled tokens; then the data files' rules and errors.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/io/ner_dataset.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/train/ner_data.h"
#include "kiln/train/seqeval_metrics.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::error_of;

const std::string kRoot = std::string(KILN_SOURCE_DIR);

using Rows = std::vector<std::vector<std::string>>;

// The tokenizers of the fixture by name, RoBERTa's with add_prefix_space as run_ner.py loads it.
std::map<std::string, Tokenizer> fixture_tokenizers() {
  std::map<std::string, Tokenizer> out;
  out.emplace("bert-base-uncased",
              tokenizer_load_vocab(kRoot + "/data/vocab/bert-base-uncased-vocab.txt"));
  out.emplace("austen-wordpiece-8k",
              tokenizer_load_vocab(kRoot + "/data/vocab/austen-wordpiece-8k.txt"));
  Tokenizer roberta = tokenizer_load(kRoot + "/tests/fixtures/tokenizer_bpe/roberta");
  roberta.set_add_prefix_space(true);
  out.emplace("roberta", std::move(roberta));
  return out;
}

const nlohmann::json& fixture() {
  static const nlohmann::json json =
      nlohmann::json::parse(testing::read_text(kRoot + "/tests/data/ner/features.json"));
  return json;
}

NerDataset one_row(const nlohmann::json& c) {
  NerDataset data;
  data.source = "case";
  data.words = {c["words"].get<std::vector<std::string>>()};
  data.tags = {c["tags"].get<std::vector<std::string>>()};
  data.lines = {1};
  return data;
}

TEST(NerFeatures, MatchRunNerTokenizeAndAlignLabels) {
  const std::map<std::string, Tokenizer> tokenizers = fixture_tokenizers();
  const auto label_list = fixture()["label_list"].get<std::vector<std::string>>();
  size_t compared = 0;
  for (const nlohmann::json& c : fixture()["cases"]) {
    SCOPED_TRACE(c["tokenizer"].get<std::string>() + " " + c["words"].dump() + " max " +
                 c["max_seq_length"].dump());
    const NerDataset data = one_row(c);
    for (bool all_tokens : {false, true}) {
      NerFeatureOptions options{c["max_seq_length"].get<size_t>(), all_tokens};
      NerFeatures features =
          ner_features(tokenizers.at(c["tokenizer"].get<std::string>()), data, label_list, options);
      ASSERT_EQ(features.encodings.size(), 1u);
      EXPECT_EQ(features.encodings[0].ids, c["input_ids"].get<std::vector<int32_t>>());
      EXPECT_EQ(features.encodings[0].word_ids, c["word_ids"].get<std::vector<int32_t>>());
      EXPECT_EQ(features.labels[0],
                c[all_tokens ? "labels_all_tokens" : "labels"].get<std::vector<int32_t>>());
    }
    ++compared;
  }
  EXPECT_EQ(compared, 276u);
}

TEST(NerFeatures, LabelListIsRunNerGetLabelList) {
  NerDataset all;
  for (const nlohmann::json& c : fixture()["cases"]) {
    all.tags.push_back(c["tags"].get<std::vector<std::string>>());
  }
  EXPECT_EQ(ner_label_list(all), fixture()["label_list"].get<std::vector<std::string>>());
}

// compute_metrics: argmax (the first of equal logits, as numpy) at the tokens whose label is not
// -100; logits past a row's tokens (its bucket's padding) are not read.
TEST(NerFeatures, PredictedTagsAreRunNerTruePredictions) {
  const Tokenizer tokenizer =
      tokenizer_load_vocab(kRoot + "/data/vocab/bert-base-uncased-vocab.txt");
  const auto label_list = fixture()["label_list"].get<std::vector<std::string>>();
  for (bool all_tokens : {false, true}) {
    const std::string key = all_tokens ? "_all_tokens" : "";
    NerDataset data;
    data.source = "cases";
    ForwardOutputs outputs;
    outputs.rows.resize(1);
    Rows predictions, references;
    for (const nlohmann::json& c : fixture()["cases"]) {
      if (!c.contains("logits")) continue;
      data.words.push_back(c["words"].get<std::vector<std::string>>());
      data.tags.push_back(c["tags"].get<std::vector<std::string>>());
      data.lines.push_back(data.lines.size() + 1);
      std::vector<float>& row = outputs.rows[0].emplace_back();
      for (const nlohmann::json& token : c["logits"]) {
        for (float logit : token.get<std::vector<float>>()) row.push_back(logit);
      }
      row.resize(row.size() + 3 * label_list.size(), 9.0f);  // padding positions
      predictions.push_back(c["true_predictions" + key].get<std::vector<std::string>>());
      references.push_back(c["true_labels" + key].get<std::vector<std::string>>());
    }
    ASSERT_EQ(data.size(), 46u);
    NerFeatures features = ner_features(tokenizer, data, label_list, {128, all_tokens});
    NerData rows(data, std::move(features), label_list, false);
    EXPECT_EQ(rows.predicted_tags(outputs), predictions);
    const SeqevalScores scores = seqeval_scores(references, predictions);
    const nlohmann::json metrics = rows.metrics(outputs);
    EXPECT_EQ(metrics, nlohmann::json({{"precision", scores.overall_precision},
                                       {"recall", scores.overall_recall},
                                       {"f1", scores.overall_f1},
                                       {"accuracy", scores.overall_accuracy}}));
    // --return_entity_level_metrics: run_ner.py's flattening of every seqeval result.
    NerData entity_level(data, ner_features(tokenizer, data, label_list, {128, all_tokens}),
                         label_list, true);
    const nlohmann::json flat = entity_level.metrics(outputs);
    EXPECT_EQ(flat["overall_f1"], scores.overall_f1);
    EXPECT_EQ(flat["overall_accuracy"], scores.overall_accuracy);
    EXPECT_FALSE(flat.contains("f1"));
    for (const auto& [type, type_scores] : scores.types) {
      EXPECT_EQ(flat[type + "_precision"], type_scores.precision) << type;
      EXPECT_EQ(flat[type + "_recall"], type_scores.recall) << type;
      EXPECT_EQ(flat[type + "_f1"], type_scores.f1) << type;
      EXPECT_EQ(flat[type + "_number"], type_scores.number) << type;
    }
    EXPECT_EQ(flat.size(), 4 + 4 * scores.types.size());
  }
}

// `text` as the file `name` in `dir`.
fs::path write_rows(const fs::path& dir, const std::string& name, const std::string& text) {
  testing::write_text(dir / name, text);
  return dir / name;
}

TEST(NerDataset, ColumnsAsRunNerPicksThem) {
  const fs::path dir = testing::scratch_folder();
  // "tokens" and "ner_tags" wherever they are; else the first and second columns.
  const fs::path named = write_rows(
      dir, "named.jsonl",
      "{\"id\": 1, \"ner_tags\": [\"O\", \"B-PER\"], \"tokens\": [\"a\", \"Anne\"]}\n");
  NerDataset by_name = read_ner_dataset(named.string(), {}, true);
  EXPECT_EQ(by_name.words, Rows({{"a", "Anne"}}));
  EXPECT_EQ(by_name.tags, Rows({{"O", "B-PER"}}));
  const fs::path positional = write_rows(
      dir, "positional.jsonl",
      "{\"w\": [\"Bath\"], \"t\": [3]}\n\n{\"w\": [\"x\", \"y\"], \"t\": [10, 3]}\n");
  NerDataset by_position = read_ner_dataset(positional.string(), {}, true);
  EXPECT_EQ(by_position.tags, Rows({{"3"}, {"10", "3"}}));
  EXPECT_EQ(by_position.lines, (std::vector<size_t>{1, 3}));
  // Integer tags sort as numbers, as get_label_list sorts the ints.
  EXPECT_EQ(ner_label_list(by_position), (std::vector<std::string>{"3", "10"}));
  const fs::path flagged =
      write_rows(dir, "flagged.json", "{\"tag\": [\"O\"], \"word\": [\"x\"], \"other\": 1}\n");
  EXPECT_EQ(read_ner_dataset(flagged.string(), {"word", "tag"}, true).words, Rows({{"x"}}));
  // Prediction data may have no tags.
  const fs::path words = write_rows(dir, "words.jsonl", "{\"tokens\": [\"x\"]}\n");
  EXPECT_FALSE(read_ner_dataset(words.string(), {}, false).has_tags());
}

TEST(NerDataset, ErrorsNameTheFileAndLine) {
  const fs::path dir = testing::scratch_folder();
  const fs::path short_tags =
      write_rows(dir, "short.jsonl",
                 "{\"tokens\": [\"a\", \"b\"], \"ner_tags\": [\"O\", \"O\"]}\n"
                 "{\"tokens\": [\"a\", \"b\"], \"ner_tags\": [\"O\"]}\n");
  EXPECT_EQ(error_of([&] { read_ner_dataset(short_tags.string(), {}, true); }),
            "[" + short_tags.string() + ":2] 1 tags (\"ner_tags\") for 2 words (\"tokens\")");
  const fs::path missing = write_rows(dir, "missing.jsonl",
                                      "{\"tokens\": [\"a\"], \"ner_tags\": [\"O\"]}\n"
                                      "{\"ner_tags\": [\"O\"]}\n");
  EXPECT_EQ(error_of([&] { read_ner_dataset(missing.string(), {}, true); }),
            "[" + missing.string() + ":2] the row has no \"tokens\" (--text_column_name)");
  EXPECT_EQ(error_of([&] { read_ner_dataset(missing.string(), {"tokens", "tags"}, true); }),
            "[" + missing.string() + ":1] the row has no \"tags\" (--label_column_name)");
  const fs::path text =
      write_rows(dir, "text.jsonl", "{\"tokens\": \"a b\", \"ner_tags\": [\"O\", \"O\"]}\n");
  EXPECT_EQ(error_of([&] { read_ner_dataset(text.string(), {}, true); }),
            "[" + text.string() + ":1] \"tokens\" must be a list of words, not string");
  const fs::path mixed = write_rows(dir, "mixed.jsonl",
                                    "{\"tokens\": [\"a\"], \"ner_tags\": [1]}\n"
                                    "{\"tokens\": [\"a\"], \"ner_tags\": [\"O\"]}\n");
  EXPECT_EQ(error_of([&] { read_ner_dataset(mixed.string(), {}, true); }),
            "[" + mixed.string() +
                ":2] \"ner_tags\" mixes string tags with the integer tags of the rows before");
  const fs::path huge = write_rows(dir, "huge.jsonl",
                                   "{\"tokens\": [\"a\"], \"ner_tags\": [18446744073709551615]}\n");
  EXPECT_EQ(error_of([&] { read_ner_dataset(huge.string(), {}, true); }),
            "[" + huge.string() +
                ":1] \"ner_tags\" holds the tag 18446744073709551615, beyond the 64-bit integers");
  const fs::path csv = write_rows(dir, "rows.csv", "tokens,ner_tags\n");
  EXPECT_EQ(error_of([&] { read_ner_dataset(csv.string(), {}, true); }),
            "[" + csv.string() +
                "] token classification reads JSON lines (.json or .jsonl) of word and tag lists");
  // A tag the labels do not have (an evaluation file's tag unseen in training).
  const Tokenizer tokenizer =
      tokenizer_load_vocab(kRoot + "/data/vocab/austen-wordpiece-8k.txt");
  const fs::path unseen =
      write_rows(dir, "unseen.jsonl",
                 "{\"tokens\": [\"Anne\", \"Bath\"], \"ner_tags\": [\"B-PER\", \"B-LOC\"]}\n");
  NerDataset data = read_ner_dataset(unseen.string(), {}, true);
  EXPECT_EQ(error_of([&] { ner_features(tokenizer, data, {"B-PER", "O"}, {}); }),
            "[" + unseen.string() + ":1] the tag \"B-LOC\" is not one of the labels (B-PER, O)");
}

}  // namespace
}  // namespace kiln
