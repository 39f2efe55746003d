// run_ner.py's metrics against seqeval 1.2.2 itself (tests/fixtures_gen/make_seqeval_fixtures.py):
// every number of every case equal to the last digit, per entity type and overall.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/train/seqeval_metrics.h"
#include "support/testing.h"

namespace kiln {
namespace {

using Sentences = std::vector<std::vector<std::string>>;

nlohmann::json cases() {
  return nlohmann::json::parse(
      testing::read_text(std::string(KILN_SOURCE_DIR) + "/tests/data/seqeval/cases.json"));
}

TEST(SeqevalMetrics, EqualSeqevalOnEveryCase) {
  const nlohmann::json all = cases();
  ASSERT_GE(all.size(), 13u);
  for (const nlohmann::json& item : all) {
    SCOPED_TRACE(item["name"].get<std::string>());
    const SeqevalScores scores = seqeval_scores(item["references"].get<Sentences>(),
                                                item["predictions"].get<Sentences>());
    const nlohmann::json& expected = item["expected"];
    EXPECT_EQ(scores.overall_precision, expected["overall_precision"].get<double>());
    EXPECT_EQ(scores.overall_recall, expected["overall_recall"].get<double>());
    EXPECT_EQ(scores.overall_f1, expected["overall_f1"].get<double>());
    EXPECT_EQ(scores.overall_accuracy, expected["overall_accuracy"].get<double>());
    ASSERT_EQ(scores.types.size(), expected["types"].size());
    for (const auto& [type, type_scores] : scores.types) {
      SCOPED_TRACE(type);
      ASSERT_TRUE(expected["types"].contains(type));
      const nlohmann::json& want = expected["types"][type];
      EXPECT_EQ(type_scores.precision, want["precision"].get<double>());
      EXPECT_EQ(type_scores.recall, want["recall"].get<double>());
      EXPECT_EQ(type_scores.f1, want["f1"].get<double>());
      EXPECT_EQ(type_scores.number, want["number"].get<int64_t>());
    }
  }
}

TEST(SeqevalMetrics, EntitiesAsGetEntitiesFindsThem) {
  // seqeval's docstring example, then a chunk that "I-" starts and a type switch that ends it.
  EXPECT_EQ(seqeval_entities({{"B-PER", "I-PER", "O", "B-LOC"}}),
            (std::vector<TaggedEntity>{{"PER", 0, 1}, {"LOC", 3, 3}}));
  EXPECT_EQ(seqeval_entities({{"I-PER", "I-LOC"}, {"B-ORG"}}),
            (std::vector<TaggedEntity>{{"PER", 0, 0}, {"LOC", 1, 1}, {"ORG", 3, 3}}));
}

TEST(SeqevalMetrics, MismatchedSentencesAreAnError) {
  EXPECT_EQ(testing::error_of([] { seqeval_scores({{"O", "B-PER"}}, {{"O"}}); }),
            "[seqeval] sentence 0 has 2 reference tags but 1 predicted");
  EXPECT_EQ(testing::error_of([] { seqeval_scores({{"O"}}, {}); }),
            "[seqeval] 1 reference sentences but 0 predicted");
}

}  // namespace
}  // namespace kiln
