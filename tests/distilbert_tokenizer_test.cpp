// DistilBERT's tokenizer files (tests/data/distilbert/tokenizer/, DistilBertTokenizer as
// transformers 5 saves it: tokenizer.json with WordPiece, and a tokenizer_config.json naming
// DistilBertTokenizer, whose model_input_names have no token_type_ids) load in Kiln's WordPiece
// tokenizer and encode single texts and pairs, padded as one batch, to transformers' ids and
// attention masks (make_distilbert_fixtures.py). The type ids Kiln's encodings still carry are
// not fed to a DistilBERT graph, which has no such input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string_view>
#include <vector>

#include "distilbert_test_util.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/models/distilbert.h"
#include "kiln/models/distilbert_pretrained.h"
#include "support/testing.h"

namespace kiln {
namespace {

const std::string kTokenizerDir =
    std::string(KILN_SOURCE_DIR) + "/tests/data/distilbert/tokenizer";

using Rows = std::vector<std::vector<int64_t>>;

nlohmann::json read_encodings() {
  std::ifstream in(kTokenizerDir + "/encodings.json");
  return nlohmann::json::parse(in);
}

// A batch's [batch, seq] field as i64 rows.
Rows rows(const std::vector<Encoding>& batch,
                                       std::vector<int32_t> Encoding::*field) {
  Rows out;
  for (const Encoding& encoding : batch) {
    out.emplace_back((encoding.*field).begin(), (encoding.*field).end());
  }
  return out;
}

Tensor to_tensor(const Rows& values) {
  Tensor out(DType::i64, {static_cast<int64_t>(values.size()),
                          static_cast<int64_t>(values.front().size())});
  int64_t at = 0;
  for (const auto& row : values) {
    for (int64_t value : row) out.set(at++, static_cast<double>(value));
  }
  return out;
}

std::vector<Encoding> encode_pairs(const Tokenizer& tokenizer, const nlohmann::json& pairs) {
  std::vector<std::string> texts, seconds;
  for (const auto& pair : pairs) {
    texts.push_back(pair[0].get<std::string>());
    seconds.push_back(pair[1].get<std::string>());
  }
  std::vector<std::string_view> text_views(texts.begin(), texts.end());
  std::vector<std::string_view> second_views(seconds.begin(), seconds.end());
  EncodeOptions options;
  options.padding = Padding::longest;
  return tokenizer.encode_pair_batch(text_views, second_views, options);
}

TEST(DistilBertTokenizer, EncodesAsTransformers) {
  const nlohmann::json expected = read_encodings();
  EXPECT_EQ(expected["model_input_names"],
            nlohmann::json::parse(R"(["input_ids", "attention_mask"])"));
  Tokenizer tokenizer = tokenizer_load(kTokenizerDir);

  std::vector<std::string> singles = expected["singles"].get<std::vector<std::string>>();
  std::vector<std::string_view> views(singles.begin(), singles.end());
  EncodeOptions options;
  options.padding = Padding::longest;
  std::vector<Encoding> batch = tokenizer.encode_batch(views, options);
  EXPECT_EQ(rows(batch, &Encoding::ids), expected["single_input_ids"].get<Rows>());
  EXPECT_EQ(rows(batch, &Encoding::attention_mask), expected["single_attention_mask"].get<Rows>());

  batch = encode_pairs(tokenizer, expected["pairs"]);
  EXPECT_EQ(rows(batch, &Encoding::ids), expected["pair_input_ids"].get<Rows>());
  EXPECT_EQ(rows(batch, &Encoding::attention_mask), expected["pair_attention_mask"].get<Rows>());
}

// A collated batch of pairs carries token_type_ids (the second text's are 1); the DistilBERT
// graph has no such input, so the feed is left out, and the logits are those of the batch
// without it.
TEST(DistilBertTokenizer, TokenTypeIdsAreNotFed) {
  Tokenizer tokenizer = tokenizer_load(kTokenizerDir);
  std::vector<Encoding> batch = encode_pairs(tokenizer, read_encodings()["pairs"]);
  std::map<std::string, Tensor> feeds = {
      {"input_ids", to_tensor(rows(batch, &Encoding::ids))},
      {"attention_mask", to_tensor(rows(batch, &Encoding::attention_mask))}};
  Tensor type_ids = to_tensor(rows(batch, &Encoding::type_ids));
  ASSERT_EQ(type_ids.get(type_ids.numel() - 1), 0.0);  // padding
  ASSERT_EQ(type_ids.get(type_ids.shape()[1] - 1), 1.0);  // the first pair's last [SEP]

  testing::DistilBertFixture fixture = testing::load_distilbert_fixture("classifier");
  BertBuildOptions options;
  options.batch_size = type_ids.shape()[0];
  options.seq_len = type_ids.shape()[1];
  options.with_labels = false;
  Graph graph;
  DistilBertClassifier model = distilbert_for_sequence_classification(graph, fixture.config,
                                                                      options);
  for (int32_t id : graph.inputs()) EXPECT_NE(graph.input_name(id), "token_type_ids");
  distilbert_load_weights(model.params, fixture.dir);
  Tensor without = evaluate_reference(graph, {model.logits}, model.params.arguments(feeds))[0];
  feeds.emplace("token_type_ids", type_ids);
  Tensor with = evaluate_reference(graph, {model.logits}, model.params.arguments(feeds))[0];
  EXPECT_EQ(testing::compare_tensors(with, without, 0.0, 0.0), "");
}

}  // namespace
}  // namespace kiln
