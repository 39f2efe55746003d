// Parity with Hugging Face's tokenizers for byte-level BPE on the outputs recorded by
// tests/fixtures_gen/make_bpe_fixtures.py: small tokenizers trained on Persuasion with the
// pipelines of GPT-2's and RoBERTa's tokenizer.json (and two with the BPE options those leave
// out), loaded from their folders; adversarial texts, pairs with truncation, padding and windows
// (every output in full), 300 Austen lines and 300 UCI sentences (ids and offsets hashed).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "kiln/io/tokenizer_files.h"
#include "support/testing.h"
#include "support/tokenizer_cases.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::read_text;
using testing::split_lines;

const fs::path kSource = KILN_SOURCE_DIR;
const fs::path kFixtures = kSource / "tests/fixtures/tokenizer_bpe";

struct Fixture {
  Json header;
  std::vector<Json> cases;  // texts run through a tokenizer
  std::vector<Json> corpora;
};

Fixture read_fixture() {
  const auto lines = split_lines(read_text(kFixtures / "cases.jsonl"));
  Fixture fixture;
  if (lines.empty()) return fixture;
  fixture.header = Json::parse(lines[0]);
  for (size_t i = 1; i < lines.size(); ++i) {
    Json c = Json::parse(lines[i]);
    (c.contains("corpus") ? fixture.corpora : fixture.cases).push_back(std::move(c));
  }
  return fixture;
}

// The folders as a user loads them; "roberta_prefix" is RoBERTa's tokenizer.json with a
// tokenizer_config.json that asks for add_prefix_space. Tokenizers without a padding token
// (GPT-2's) pad with the one the generator used, as run_clm.py users set pad = eos.
std::map<std::string, Tokenizer> fixture_tokenizers(const Json& header) {
  std::map<std::string, Tokenizer> tokenizers;
  for (const char* name : {"gpt2", "roberta", "options", "plain"}) {
    tokenizers.emplace(name, tokenizer_load((kFixtures / name).string()));
  }
  const fs::path roberta = kFixtures / "roberta/tokenizer.json";
  tokenizers.emplace("roberta_prefix",
                     tokenizer_json_parse(read_text(roberta), roberta.string(),
                                          R"({"add_prefix_space": true})", "tokenizer_config"));
  for (auto& [name, tokenizer] : tokenizers) {
    const std::string pad = header.at("pad_tokens").at(name);
    if (tokenizer.config().special.pad.empty()) tokenizer.set_pad_token(pad);
    EXPECT_EQ(tokenizer.config().special.pad, pad) << name;
    EXPECT_EQ(tokenizer.vocab_size(), header.at("vocab_sizes").at(name).get<int32_t>()) << name;
  }
  return tokenizers;
}

TEST(TokenizerBpeParity, AdversarialTextsPairsTruncationPadding) {
  const Fixture fixture = read_fixture();
  ASSERT_FALSE(fixture.cases.empty()) << "missing " << (kFixtures / "cases.jsonl");
  const std::map<std::string, Tokenizer> tokenizers = fixture_tokenizers(fixture.header);
  testing::CaseCounts counts;
  size_t decoded = 0;
  for (size_t i = 0; i < fixture.cases.size(); ++i) {
    const Json& c = fixture.cases[i];
    SCOPED_TRACE("case " + std::to_string(i) + ": " + testing::describe_case(c));
    const Tokenizer& tokenizer = tokenizers.at(c["tokenizer"].get<std::string>());
    testing::check_tokenizer_case(tokenizer, c, testing::options_from(c["options"]), counts);
    if (c.contains("decoded_all")) {  // special tokens kept
      const Encoding e = tokenizer.encode(c["texts"][0].get<std::string>(), EncodeOptions{});
      EXPECT_EQ(tokenizer.decode(e.ids, false), c["decoded_all"].get<std::string>());
      ++decoded;
    }
  }
  EXPECT_EQ(counts.compared + counts.errors, fixture.cases.size());
  EXPECT_GT(counts.compared, 800u);
  EXPECT_GT(decoded, 500u);
}

TEST(TokenizerBpeParity, AustenAndUciLines) {
  const Fixture fixture = read_fixture();
  ASSERT_EQ(fixture.corpora.size(), 10u) << "missing " << (kFixtures / "cases.jsonl");
  const std::map<std::string, Tokenizer> tokenizers = fixture_tokenizers(fixture.header);
  const std::vector<std::string> austen = split_lines(read_text(kSource / "data/lm/austen.txt"));
  std::vector<std::string> uci;
  const fs::path tsv = kSource / "data/classification/uci-sentiment.tsv";
  for (const std::string& row : split_lines(read_text(tsv))) {
    uci.push_back(row.substr(row.find('\t', row.find('\t') + 1) + 1));
  }
  size_t checked = 0, mismatches = 0;
  for (const Json& corpus : fixture.corpora) {
    const std::string name = corpus["tokenizer"];
    const Tokenizer& tokenizer = tokenizers.at(name);
    const std::vector<std::string>& lines = corpus["corpus"] == "austen" ? austen : uci;
    const auto numbers = corpus["lines"].get<std::vector<size_t>>();
    const auto hashes = corpus["hashes"].get<std::vector<std::string>>();
    ASSERT_EQ(numbers.size(), hashes.size());
    for (size_t k = 0; k < numbers.size(); ++k) {
      const std::string& line = lines.at(numbers[k]);
      const Encoding e = tokenizer.encode(line, EncodeOptions{});
      std::vector<int64_t> flat(e.ids.begin(), e.ids.end());
      for (const CharRange& o : e.offsets) {
        flat.push_back(static_cast<int64_t>(o.start));
        flat.push_back(static_cast<int64_t>(o.end));
      }
      const bool same = testing::hex(testing::fnv1a64(flat), 16) == hashes[k];
      if (!same && ++mismatches <= 10) {
        ADD_FAILURE() << name << ", " << corpus["corpus"] << " line " << numbers[k]
                      << ": ids or offsets differ from tokenizers': " << line;
      }
      if (corpus["lossless"].get<bool>()) {
        EXPECT_EQ(tokenizer.decode(e.ids), line) << name;
      }
      ++checked;
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(checked, 3000u);
}

}  // namespace
}  // namespace kiln
