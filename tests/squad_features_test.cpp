// Question-answering features and post-processing against run_qa.py and utils_qa.py on real SQuAD
// questions (fixtures by tests/fixtures_gen/make_qa_fixtures.py), and QA batches.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/io/squad_features.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/train/qa_postprocess.h"
#include "support/testing.h"

namespace kiln {
namespace {

const std::string kRoot = std::string(KILN_SOURCE_DIR);
const std::string kFixtures = kRoot + "/tests/data/squad/qa/";

struct Fixture {
  Tokenizer tokenizer = tokenizer_load_vocab(kRoot + "/data/vocab/bert-base-uncased-vocab.txt");
  SquadDataset dataset = load_squad(kFixtures + "examples.jsonl");
  nlohmann::json expected = nlohmann::json::parse(testing::read_text(kFixtures + "features.json"));
  QaFeatures features = squad_features(
      tokenizer, dataset,
      {expected["max_seq_length"].get<size_t>(), expected["doc_stride"].get<size_t>()});
};

TEST(SquadFeatures, MatchRunQaFeatures) {
  Fixture fixture;
  const nlohmann::json& expected = fixture.expected["features"];
  const QaFeatures& features = fixture.features;
  ASSERT_EQ(features.size(), expected.size());
  for (size_t f = 0; f < features.size(); ++f) {
    SCOPED_TRACE("feature " + std::to_string(f));
    const Encoding& encoding = features.encodings[f];
    EXPECT_EQ(fixture.dataset.examples[features.example_of[f]].id, expected[f]["example_id"]);
    EXPECT_EQ(encoding.ids, expected[f]["input_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(encoding.type_ids, expected[f]["token_type_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(features.start_positions[f], expected[f]["start_position"]);
    EXPECT_EQ(features.end_positions[f], expected[f]["end_position"]);
    const nlohmann::json& offsets = expected[f]["offset_mapping"];
    for (size_t t = 0; t < encoding.size(); ++t) {
      if (offsets[t].is_null()) {
        EXPECT_NE(encoding.sequence_ids[t], 1) << "token " << t;
      } else {
        EXPECT_EQ(encoding.sequence_ids[t], 1) << "token " << t;
        EXPECT_EQ(encoding.offsets[t].start, offsets[t][0].get<size_t>()) << "token " << t;
        EXPECT_EQ(encoding.offsets[t].end, offsets[t][1].get<size_t>()) << "token " << t;
      }
    }
  }
  // Some windows hold their answer, some do not ([CLS] = 0), and some questions have none.
  size_t inside = 0;
  for (int32_t start : features.start_positions) inside += start > 0;
  EXPECT_GT(inside, 10u);
  EXPECT_LT(inside, features.size());
}

TEST(SquadFeatures, PostprocessingMatchesUtilsQa) {
  Fixture fixture;
  nlohmann::json expected = nlohmann::json::parse(testing::read_text(kFixtures + "postprocess.json"));
  std::vector<std::vector<float>> starts, ends;
  for (const auto& row : expected["logits"]) {
    starts.push_back(row[0].get<std::vector<float>>());
    ends.push_back(row[1].get<std::vector<float>>());
  }
  for (const auto& c : expected["cases"]) {
    QaPostprocessOptions options;
    options.version_2_with_negative = c["version_2_with_negative"];
    options.n_best_size = c["n_best_size"];
    options.max_answer_length = c["max_answer_length"];
    options.null_score_diff_threshold = c["null_score_diff_threshold"];
    SCOPED_TRACE(c.dump().substr(0, 120));
    QaPredictionSet out =
        postprocess_qa_predictions(fixture.dataset, fixture.features, starts, ends, options);
    ASSERT_EQ(out.predictions.size(), fixture.dataset.size());
    for (size_t e = 0; e < out.predictions.size(); ++e) {
      const auto& [id, text] = out.predictions[e];
      EXPECT_EQ(text, c["predictions"][id].get<std::string>()) << id;
      const auto& texts = c["nbest_texts"][id];
      for (size_t k = 0; k < texts.size(); ++k) EXPECT_EQ(out.nbest[e][k].text, texts[k]) << id;
      const auto& probabilities = c["nbest_probabilities"][id];
      for (size_t k = 0; k < probabilities.size(); ++k) {
        EXPECT_NEAR(out.nbest[e][k].probability, probabilities[k].get<double>(), 1e-6) << id;
      }
    }
    if (options.version_2_with_negative) {
      ASSERT_EQ(out.null_odds.size(), fixture.dataset.size());
      for (const auto& [id, odds] : out.null_odds) {
        EXPECT_EQ(static_cast<float>(odds), c["null_odds"][id].get<float>()) << id;
      }
    } else {
      EXPECT_TRUE(out.null_odds.empty());
    }
  }
}

TEST(SquadFeatures, BatchesPadPositionsToTheIgnoredLength) {
  Fixture fixture;
  CollateOptions options;
  options.batch_size = 4;
  options.max_seq_length = 96;
  std::vector<size_t> rows = {3, 0};
  QaBatch batch = collate_qa_batch(fixture.features, rows, options);
  EXPECT_EQ(batch.inputs.input_ids.shape(), (Shape{4, 96}));
  EXPECT_EQ(batch.start_positions.get(0), fixture.features.start_positions[3]);
  EXPECT_EQ(batch.end_positions.get(1), fixture.features.end_positions[0]);
  EXPECT_EQ(batch.start_positions.get(2), 96.0);
  EXPECT_EQ(batch.end_positions.get(3), 96.0);
  EXPECT_EQ(fixture.features.head(5).size(), 5u);
  EXPECT_EQ(fixture.features.head(0).size(), fixture.features.size());
}

TEST(SquadFeatures, AQuestionTooLongForTheWindowIsNamed) {
  Fixture fixture;
  std::string error = testing::error_of([&] { squad_features(fixture.tokenizer, fixture.dataset, {16, 4}); });
  EXPECT_NE(error.find("question '" + fixture.dataset.examples[0].id + "'"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace kiln
