// The SQuAD v1.1 and v2.0 evaluations against what the official scripts print on prediction files
// with tricky cases (fixtures by tests/fixtures_gen/make_squad_eval_fixtures.py): every key, in
// order, and every printed digit.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/train/log_python_json.h"
#include "kiln/train/squad_metrics.h"
#include "support/testing.h"

namespace kiln {
namespace {

const std::string kEval = std::string(KILN_SOURCE_DIR) + "/tests/data/squad/eval/";
const std::string kData = std::string(KILN_SOURCE_DIR) + "/data/qa/";

template <typename Value>
std::vector<std::pair<std::string, Value>> pairs_of(const std::string& file) {
  auto json = nlohmann::ordered_json::parse(testing::read_text(kEval + file));
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& [key, value] : json.items()) out.emplace_back(key, value.template get<Value>());
  return out;
}

// "key": value pairs of a script's output, as printed.
std::vector<std::pair<std::string, std::string>> printed(const std::string& file) {
  std::string text = testing::read_text(kEval + file);
  std::regex pair(R"re("(\w+)": ([^,\n}]+))re");
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pair); it != std::sregex_iterator();
       ++it) {
    out.emplace_back((*it)[1], (*it)[2]);
  }
  return out;
}

// The metrics as Python's json module would print each value.
std::vector<std::pair<std::string, std::string>> as_printed(const nlohmann::ordered_json& metrics) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : metrics.items()) {
    out.emplace_back(key, value.is_number_float() ? python_float_repr(value.get<double>())
                                                  : value.dump());
  }
  return out;
}

TEST(SquadMetrics, V1MatchesTheOfficialScriptOnTrickyCases) {
  SquadDataset data = load_squad(kEval + "tricky_v1.json");
  std::vector<std::string> unanswered;
  auto metrics = squad_v1_evaluate(squad_references(data),
                                   pairs_of<std::string>("tricky_v1_predictions.json"), &unanswered);
  EXPECT_EQ(as_printed(metrics), printed("tricky_v1_expected.txt"));
  EXPECT_EQ(unanswered, std::vector<std::string>{"unanswered"});
}

TEST(SquadMetrics, V1MatchesTheOfficialScriptOnTheDevSubset) {
  SquadDataset data = load_squad(kData + "squad-v1.1-dev-first4.json");
  auto metrics =
      squad_v1_evaluate(squad_references(data), pairs_of<std::string>("dev_v1_predictions.json"));
  EXPECT_EQ(as_printed(metrics), printed("dev_v1_expected.txt"));
}

TEST(SquadMetrics, V2MatchesTheOfficialScriptOnTrickyCases) {
  SquadDataset data = load_squad(kEval + "tricky_v2.json");
  auto references = squad_references(data);
  auto predictions = pairs_of<std::string>("tricky_v2_predictions.json");
  auto na_probs = pairs_of<double>("tricky_v2_na_probs.json");
  EXPECT_EQ(as_printed(squad_v2_evaluate(references, predictions, &na_probs)),
            printed("tricky_v2_expected.txt"));
  EXPECT_EQ(as_printed(squad_v2_evaluate(references, predictions)),
            printed("tricky_v2_no_na_probs_expected.txt"));
}

TEST(SquadMetrics, V2MatchesTheOfficialScriptOnTheDevFile) {
  SquadDataset data = load_squad(kData + "squad-v2.0-dev-first5.json");
  auto references = squad_references(data);
  auto predictions = pairs_of<std::string>("dev_v2_predictions.json");
  auto na_probs = pairs_of<double>("dev_v2_na_probs.json");
  EXPECT_EQ(as_printed(squad_v2_evaluate(references, predictions, &na_probs)),
            printed("dev_v2_expected.txt"));
  EXPECT_EQ(as_printed(squad_v2_evaluate(references, predictions, &na_probs, 0.5)),
            printed("dev_v2_thresh_0.5_expected.txt"));
}

TEST(SquadMetrics, NormalizesAsTheScripts) {
  EXPECT_EQ(squad_normalize_answer("  The  Eiffel\tTower! "), "eiffel tower");
  EXPECT_EQ(squad_normalize_answer("an apple a day"), "apple day");
  EXPECT_EQ(squad_normalize_answer("theatre, anarchy"), "theatre anarchy");
  EXPECT_EQ(squad_normalize_answer("a€"), "€");
  EXPECT_EQ(squad_normalize_answer("año"), "año");
  EXPECT_EQ(squad_normalize_answer("New\u00a0York"), "new york");
  EXPECT_EQ(squad_normalize_answer("new\u200byork"), "new\u200byork");
  EXPECT_EQ(squad_normalize_answer("the a an"), "");
}

TEST(SquadMetrics, RejectsWhatTheScriptsCannotScore) {
  std::vector<SquadReference> references = {{"q1", {"x"}}, {"q2", {}}};
  EXPECT_NE(testing::error_of([&] { squad_v1_evaluate(references, {{"q1", "x"}, {"q2", ""}}); })
                .find("question 'q2' has no gold answer"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { squad_v2_evaluate(references, {{"q1", "x"}}); })
                .find("no prediction for question 'q2'"),
            std::string::npos);
  SquadNoAnswerProbs partial = {{"q1", 0.5}};
  EXPECT_NE(testing::error_of([&] {
              squad_v2_evaluate(references, {{"q1", "x"}, {"q2", ""}}, &partial);
            }).find("no no-answer probability for question 'q2'"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { squad_v2_evaluate({{"q", {}}, {"q", {}}}, {{"q", ""}}); })
                .find("'q' appears twice"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
