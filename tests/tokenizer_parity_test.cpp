// Parity with Hugging Face's BertTokenizerFast / tokenizers on the outputs recorded by
// tests/fixtures_gen/make_tokenizer_fixtures.py: adversarial texts (in full), the UCI sentences
// and every line of the Austen novels (Austen read from $KILN_SHARED_DIR or ../shared, skipped
// when absent), with bert-base-uncased's vocabulary and with the Austen WordPiece one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"
#include "support/testing.h"
#include "support/tokenizer_cases.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::fnv1a64;
using testing::hex;
using testing::joined;
using testing::offsets_text;
using testing::options_from;
using testing::read_text;
using testing::split_lines;

const fs::path kSource = KILN_SOURCE_DIR;
const fs::path kFixtures = kSource / "tests/fixtures/tokenizer";
const fs::path kVocab = kSource / "data/vocab/bert-base-uncased-vocab.txt";

fs::path shared_dir() {
  const char* env = std::getenv("KILN_SHARED_DIR");
  return env ? fs::path(env) : kSource.parent_path() / "shared";
}

// Rows as transformers returns them with return_overflowing_tokens: each encoding, then its
// windows.
std::vector<const Encoding*> rows_of(const std::vector<Encoding>& batch) {
  std::vector<const Encoding*> rows;
  for (const Encoding& e : batch) {
    rows.push_back(&e);
    for (const Encoding& window : e.overflowing) rows.push_back(&window);
  }
  return rows;
}

// The generator's rows_hash: per row its length, ids, type ids, attention mask, offsets.
uint64_t rows_hash(const std::vector<Encoding>& batch) {
  std::vector<int64_t> flat;
  for (const Encoding* e : rows_of(batch)) {
    flat.push_back(static_cast<int64_t>(e->size()));
    flat.insert(flat.end(), e->ids.begin(), e->ids.end());
    flat.insert(flat.end(), e->type_ids.begin(), e->type_ids.end());
    flat.insert(flat.end(), e->attention_mask.begin(), e->attention_mask.end());
    for (const CharRange& o : e->offsets) {
      flat.push_back(static_cast<int64_t>(o.start));
      flat.push_back(static_cast<int64_t>(o.end));
    }
  }
  return fnv1a64(flat);
}

Tokenizer vocab_tokenizer(const Json& config) {
  return tokenizer_vocab_parse(read_text(kVocab), kVocab.string(), config.dump(), "config");
}

TEST(TokenizerParity, AdversarialTextsPairsTruncationPadding) {
  const auto lines = split_lines(read_text(kFixtures / "adversarial.jsonl"));
  ASSERT_GT(lines.size(), 1u) << "missing " << (kFixtures / "adversarial.jsonl");
  const Json header = Json::parse(lines[0]);
  std::map<std::string, Tokenizer> tokenizers;
  for (const auto& [name, config] : header["configs"].items()) {
    tokenizers.emplace(name, vocab_tokenizer(config));
  }
  tokenizers.emplace("custom", tokenizer_load_json((kFixtures / "custom_tokenizer.json").string()));

  testing::CaseCounts counts;
  for (size_t i = 1; i < lines.size(); ++i) {
    const Json c = Json::parse(lines[i]);
    SCOPED_TRACE("case " + std::to_string(i) + ": " + testing::describe_case(c));
    const Tokenizer& tokenizer = tokenizers.at(c["tokenizer"].get<std::string>());
    const EncodeOptions options =
        c["options"].is_string() ? tokenizer.config().defaults : options_from(c["options"]);
    testing::check_tokenizer_case(tokenizer, c, options, counts);
  }
  EXPECT_GT(counts.compared, 900u);
  EXPECT_GT(counts.errors, 10u);
}

// The repository's copy of the UCI sentences when it has one, else the shared data folder's.
fs::path uci_tsv() {
  const fs::path in_repo = kSource / "data/classification/uci-sentiment.tsv";
  return fs::exists(in_repo) ? in_repo : shared_dir() / "data/classification/uci-sentiment.tsv";
}

// The third column (the sentence) of every row.
std::vector<std::string> uci_texts(const fs::path& tsv) {
  std::vector<std::string> texts;
  for (const std::string& line : split_lines(read_text(tsv))) {
    size_t tab = line.find('\t', line.find('\t') + 1);
    texts.push_back(line.substr(tab + 1));
  }
  return texts;
}

TEST(TokenizerParity, UciSentences) {
  const fs::path tsv = uci_tsv();
  if (!fs::exists(tsv)) GTEST_SKIP() << "no " << tsv << " (set KILN_SHARED_DIR to ../shared)";
  const std::vector<std::string> texts = uci_texts(tsv);
  ASSERT_EQ(texts.size(), 3000u);
  const Tokenizer uncased = vocab_tokenizer(Json::object());
  const Tokenizer cased = vocab_tokenizer({{"do_lower_case", false}});
  EncodeOptions pair_options;
  pair_options.truncation = Truncation::longest_first;
  pair_options.max_length = 48;
  pair_options.padding = Padding::max_length;
  EncodeOptions window_options;
  window_options.truncation = Truncation::only_second;
  window_options.max_length = 32;
  window_options.stride = 8;

  size_t checked = 0;
  for (const std::string& line : split_lines(read_text(kFixtures / "uci.txt"))) {
    if (line.starts_with("#")) continue;
    std::istringstream in(line);
    std::string kind, rest;
    size_t i = 0;
    in >> kind >> i;
    std::getline(in, rest);
    rest.erase(0, 1);
    ASSERT_LT(i, texts.size());
    SCOPED_TRACE(kind + " line " + std::to_string(i) + ": " + texts[i]);
    if (kind == "single") {
      const Encoding e = uncased.encode(texts[i], {});
      EXPECT_EQ(joined(e.ids) + " | " + offsets_text(e.offsets), rest);
    } else if (kind == "cased") {
      const Encoding e = cased.encode(texts[i], {});
      EXPECT_EQ(hex(fnv1a64({e.ids.begin(), e.ids.end()}), 16), rest);
    } else if (kind == "pair") {
      EXPECT_EQ(hex(rows_hash({uncased.encode_pair(texts[i], texts[i + 1], pair_options)}), 16),
                rest);
    } else if (kind == "window") {
      if (rest == "error") {
        EXPECT_THROW(uncased.encode_pair(texts[i], texts[i + 1], window_options), Error);
      } else {
        EXPECT_EQ(hex(rows_hash({uncased.encode_pair(texts[i], texts[i + 1], window_options)}), 16),
                  rest);
      }
    } else {
      FAIL() << "unknown fixture line: " << line;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 3000u * 2 + 1500u * 2);
}

TEST(TokenizerParity, EveryLineOfAusten) {
  const fs::path austen = shared_dir() / "data/lm/austen";
  if (!fs::exists(austen)) GTEST_SKIP() << "no " << austen << " (set KILN_SHARED_DIR to ../shared)";
  const Tokenizer uncased = vocab_tokenizer(Json::object());
  const Tokenizer cased = vocab_tokenizer({{"do_lower_case", false}});
  const auto expected = split_lines(read_text(kFixtures / "austen.txt"));
  size_t at = 0, files = 0, lines_checked = 0, mismatches = 0;
  while (at < expected.size()) {
    if (expected[at].starts_with("#")) {
      ++at;
      continue;
    }
    std::istringstream in(expected[at++]);
    std::string word, name, cased_hash;
    size_t count = 0, uncased_tokens = 0, cased_tokens = 0;
    in >> word >> name >> count >> uncased_tokens >> cased_tokens >> cased_hash;
    ASSERT_EQ(word, "file");
    const std::vector<std::string> lines = split_lines(read_text(austen / name));
    ASSERT_EQ(lines.size(), count) << name;
    size_t total_uncased = 0, total_cased = 0;
    std::vector<int64_t> cased_flat;
    for (size_t i = 0; i < lines.size(); ++i) {
      const Encoding u = uncased.encode(lines[i], {});
      const Encoding c = cased.encode(lines[i], {});
      total_uncased += u.size();
      total_cased += c.size();
      cased_flat.push_back(static_cast<int64_t>(c.size()));
      cased_flat.insert(cased_flat.end(), c.ids.begin(), c.ids.end());
      const std::string hash = hex(fnv1a64({u.ids.begin(), u.ids.end()}) & 0xFFFFFFFFu, 8);
      if (hash != expected.at(at + i) && ++mismatches <= 10) {
        ADD_FAILURE() << name << " line " << i + 1
                      << ": ids differ from BertTokenizerFast: " << lines[i];
      }
      ++lines_checked;
    }
    at += count;
    EXPECT_EQ(total_uncased, uncased_tokens) << name;
    EXPECT_EQ(total_cased, cased_tokens) << name;
    EXPECT_EQ(hex(fnv1a64(cased_flat), 16), cased_hash) << name << " (cased)";
    ++files;
  }
  EXPECT_EQ(files, 6u);
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GT(lines_checked, 70000u);
}

// The vocabulary scripts/train_wordpiece.py trained on the novels (used by pretrain -> fine-tune):
// other pieces than bert-base-uncased's, so other greedy longest-match paths.
TEST(TokenizerParity, AustenWordPieceVocabulary) {
  const fs::path tsv = uci_tsv();
  const fs::path austen = shared_dir() / "data/lm/austen";
  if (!fs::exists(tsv) || !fs::exists(austen)) {
    GTEST_SKIP() << "no " << tsv << " or " << austen << " (set KILN_SHARED_DIR to ../shared)";
  }
  const Tokenizer tokenizer =
      tokenizer_load_vocab((kSource / "data/vocab/austen-wordpiece-8k.txt").string());
  const std::vector<std::string> texts = uci_texts(tsv);
  size_t sentences = 0, files = 0;
  for (const std::string& line : split_lines(read_text(kFixtures / "austen_vocab.txt"))) {
    if (line.starts_with("#")) continue;
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "uci") {
      size_t i = 0;
      std::string hash;
      in >> i >> hash;
      ASSERT_LT(i, texts.size());
      const Encoding e = tokenizer.encode(texts[i], {});
      std::vector<int64_t> flat(e.ids.begin(), e.ids.end());
      for (const CharRange& o : e.offsets) {
        flat.push_back(static_cast<int64_t>(o.start));
        flat.push_back(static_cast<int64_t>(o.end));
      }
      EXPECT_EQ(hex(fnv1a64(flat), 16), hash) << "UCI line " << i << ": " << texts[i];
      ++sentences;
    } else if (kind == "file") {
      std::string name, hash;
      size_t count = 0, tokens = 0;
      in >> name >> count >> tokens >> hash;
      const std::vector<std::string> lines = split_lines(read_text(austen / name));
      ASSERT_EQ(lines.size(), count) << name;
      size_t total = 0;
      std::vector<int64_t> flat;
      for (const std::string& text : lines) {
        const Encoding e = tokenizer.encode(text, {});
        total += e.size();
        flat.push_back(static_cast<int64_t>(e.size()));
        flat.insert(flat.end(), e.ids.begin(), e.ids.end());
      }
      EXPECT_EQ(total, tokens) << name;
      EXPECT_EQ(hex(fnv1a64(flat), 16), hash) << name;
      ++files;
    } else {
      FAIL() << "unknown fixture line: " << line;
    }
  }
  EXPECT_EQ(sentences, 3000u);
  EXPECT_EQ(files, 6u);
}

}  // namespace
}  // namespace kiln
