// The SQuAD reader: the official nested layout, Hugging Face's flat layout as JSON and JSON Lines,
// and the errors that name the file and the question.
#include <gtest/gtest.h>

#include <string>

#include "kiln/io/squad_dataset.h"
#include "support/testing.h"

namespace kiln {
namespace {

const std::string kData = std::string(KILN_SOURCE_DIR) + "/data/qa/";

std::string error_parsing(const std::string& text, bool jsonl = false) {
  return testing::error_of([&] { parse_squad(text, "q.json", jsonl); });
}

TEST(SquadDataset, ReadsTheOfficialNestedLayout) {
  SquadDataset data = load_squad(kData + "squad-v2.0-dev-first5.json");
  EXPECT_EQ(data.version, "v2.0");
  ASSERT_EQ(data.size(), 1407u);
  EXPECT_TRUE(data.has_unanswerable());
  const SquadExample& first = data.examples[0];
  EXPECT_EQ(first.id, "56ddde6b9a695914005b9628");
  EXPECT_EQ(first.title, "Normans");
  EXPECT_EQ(first.question, "In what country is Normandy located?");
  ASSERT_EQ(first.answers.size(), 4u);
  EXPECT_EQ(first.answers[0].text, "France");
  EXPECT_EQ(first.answers[0].answer_start, 159u);
  size_t unanswerable = 0;
  for (const SquadExample& example : data.examples) unanswerable += example.answers.empty();
  EXPECT_EQ(unanswerable, 702u);
}

TEST(SquadDataset, ReadsTheFlatLayout) {
  SquadDataset data = load_squad(kData + "squad-v2-sample.json");
  ASSERT_EQ(data.size(), 14u);
  size_t unanswerable = 0;
  for (const SquadExample& example : data.examples) unanswerable += example.answers.empty();
  EXPECT_EQ(unanswerable, 6u);
  SquadDataset lines = parse_squad(
      R"({"id": "a", "context": "ab cd", "question": "q", "answers": {"text": ["cd"], "answer_start": [3]}})"
      "\n\n"
      R"({"id": "b", "title": "T", "context": "x", "question": "q", "answers": {"text": [], "answer_start": []}})"
      "\n",
      "q.jsonl", true);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines.examples[0].answers[0].answer_start, 3u);
  EXPECT_EQ(lines.examples[1].title, "T");
  EXPECT_TRUE(lines.examples[1].answers.empty());
}

TEST(SquadDataset, CountsAnswerStartsInCharacters) {
  // "é" is two bytes and one character: the answer starts at character 2, byte 3.
  SquadDataset data = parse_squad(
      R"({"data": [{"title": "t", "paragraphs": [{"context": "é x", "qas": [)"
      R"({"id": "1", "question": "q", "answers": [{"text": "x", "answer_start": 2}]}]}]}]})",
      "q.json", false);
  EXPECT_EQ(data.examples[0].answers[0].answer_start, 2u);
  EXPECT_NE(error_parsing(R"({"data": [{"paragraphs": [{"context": "é x", "qas": [)"
                          R"({"id": "1", "question": "q", "answers": [{"text": "x", "answer_start": 3}]}]}]}]})"),
            "no error");
}

TEST(SquadDataset, ErrorsNameTheFileAndTheQuestion) {
  EXPECT_EQ(error_parsing(R"({"data": [{"paragraphs": [{"context": "abc", "qas": [)"
                          R"({"id": "q7", "question": "q", "answers": [{"text": "bcd", "answer_start": 1}]}]}]}]})"),
            "[q.json question 'q7'] the answer \"bcd\" at 1 runs past the end of the context (3 "
            "characters)");
  EXPECT_EQ(error_parsing(R"({"data": [{"paragraphs": [{"context": "abc", "qas": [)"
                          R"({"id": "q7", "answers": []}]}]}]})"),
            "[q.json question 'q7'] no \"question\"");
  EXPECT_EQ(error_parsing(R"({"data": [{"paragraphs": [{"context": "abc", "qas": [{}, )"
                          R"({"question": "q", "answers": []}]}]}]})"),
            "[q.json data[0].paragraphs[0].qas[0]] no \"id\"");
  EXPECT_EQ(error_parsing(R"({"data": [{"paragraphs": [{"context": "abc", "qas": [)"
                          R"({"id": "q1", "question": "q", "answers": [{"text": "a", "answer_start": -1}]}]}]}]})"),
            "[q.json question 'q1'] answer_start -1 is not a non-negative integer");
  EXPECT_EQ(error_parsing(R"({"data": [{"id": "f", "context": "c", "question": "q", )"
                          R"("answers": {"text": ["c"], "answer_start": []}}]})"),
            "[q.json question 'f'] answers has 1 texts but 0 answer_start values");
  EXPECT_EQ(error_parsing(R"({"data": [{"id": "f", "context": "c", "question": "q", )"
                          R"("answers": {"text": [], "answer_start": []}}, )"
                          R"({"id": "f", "context": "c", "question": "q", )"
                          R"("answers": {"text": [], "answer_start": []}}]})"),
            "[q.json question 'f'] the id is used twice (also by question 1 of the file)");
  EXPECT_EQ(error_parsing("{\"id\": \"a\"}\n{\"id\": \"b\", \"context\": 3}\n", true),
            "[q.json:1 question 'a'] no \"context\"");
  EXPECT_NE(error_parsing("{\"data\": [", false).find("[q.json] invalid JSON"), std::string::npos);
  EXPECT_EQ(error_parsing(R"({"version": "1.1"})"), "[q.json] no \"data\"");
  EXPECT_EQ(testing::error_of([] { load_squad("/nonexistent/squad.json"); }).substr(0, 26),
            "[/nonexistent/squad.json] ");
}

}  // namespace
}  // namespace kiln
