// Byte-level BPE tokenizers: GPT-2's and RoBERTa's files (the folders make_bpe_fixtures.py
// wrote), their special tokens and GPT-2's missing padding token, saving and reloading, the
// errors tokenizer.json gets, and the ByteLevel decoder's byte table and UTF-8 repair (expected
// values from `tokenizers`' ByteLevel decoder and Python's bytes.decode("utf-8", "replace")).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/io/tokenizer_byte_level.h"
#include "kiln/io/tokenizer_files.h"
#include "support/testing.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::read_text;

const fs::path kFixtures = fs::path(KILN_SOURCE_DIR) / "tests/fixtures/tokenizer_bpe";

TEST(TokenizerBpe, Gpt2HasNoPaddingTokenUntilOneIsSet) {
  Tokenizer t = tokenizer_load((kFixtures / "gpt2").string());
  EXPECT_EQ(t.config().model, TokenizerModel::bpe);
  EXPECT_EQ(t.config().special.bos, "<|endoftext|>");
  EXPECT_EQ(t.config().special.eos, "<|endoftext|>");
  EXPECT_EQ(t.config().special.unk, "<|endoftext|>");
  EXPECT_EQ(t.config().special.pad, "");
  EXPECT_EQ(t.unk_id(), std::nullopt);  // the model has none; only tokenizer_config names one
  EXPECT_EQ(t.config().model_max_length, std::optional<size_t>(1024));
  EXPECT_NE(error_of([&] { t.pad_id(); }).find("has no padding token"), std::string::npos);
  EncodeOptions padded;
  padded.padding = Padding::longest;
  const std::vector<std::string_view> batch = {"a", "a longer text"};
  EXPECT_NE(error_of([&] { t.encode_batch(batch, padded); }).find("set_pad_token"),
            std::string::npos);
  EXPECT_NE(error_of([&] { t.set_pad_token("<pad>"); }).find("\"<pad>\" is not in the vocabulary"),
            std::string::npos);

  t.set_pad_token(t.config().special.eos);  // as run_clm.py users do
  const int32_t eos = *t.token_to_id("<|endoftext|>");
  EXPECT_EQ(t.pad_id(), eos);
  const std::vector<Encoding> rows = t.encode_batch(batch, padded);
  EXPECT_EQ(rows[0].ids.back(), eos);
  EXPECT_EQ(rows[0].attention_mask.back(), 0);
  // GPT-2 adds no special tokens.
  EXPECT_EQ(t.encode("a").special_tokens_mask, std::vector<int32_t>{0});
}

TEST(TokenizerBpe, RobertaSpecialTokensAndPostProcessor) {
  const Tokenizer t = tokenizer_load((kFixtures / "roberta").string());
  const SpecialTokens& s = t.config().special;
  EXPECT_EQ(s.bos, "<s>");
  EXPECT_EQ(s.cls, "<s>");
  EXPECT_EQ(s.eos, "</s>");
  EXPECT_EQ(s.sep, "</s>");
  EXPECT_EQ(s.unk, "<unk>");
  EXPECT_EQ(s.mask, "<mask>");  // written as {"__type": "AddedToken", "content": ...}
  EXPECT_EQ(t.pad_id(), 1);
  const PostProcessor& post = t.config().post_processor;
  EXPECT_TRUE(post.roberta);
  ASSERT_TRUE(post.byte_level.has_value());
  EXPECT_TRUE(post.byte_level->trim_offsets);
  EXPECT_FALSE(post.byte_level->add_prefix_space);
  EXPECT_EQ(post.added_tokens(false), 2u);
  EXPECT_EQ(post.added_tokens(true), 4u);
  const Encoding e = t.encode_pair("a", "b", {});
  EXPECT_EQ(e.ids.front(), 0);
  EXPECT_EQ(e.ids.back(), 2);
  EXPECT_EQ(e.type_ids, std::vector<int32_t>(e.size(), 0));
}

TEST(TokenizerBpe, TokenizerConfigSetsAddPrefixSpace) {
  const std::string json = read_text(kFixtures / "roberta/tokenizer.json");
  const Tokenizer t = tokenizer_json_parse(json, "tokenizer.json", R"({"add_prefix_space": true,
      "trim_offsets": false})",
                                           "tokenizer_config.json");
  EXPECT_TRUE(t.config().byte_level.add_prefix_space);
  EXPECT_TRUE(t.config().post_processor.byte_level->add_prefix_space);
  EXPECT_FALSE(t.config().post_processor.byte_level->trim_offsets);
}

TEST(TokenizerBpe, SaveAndLoadRoundTrip) {
  const std::vector<std::string_view> texts = {
      "It's here, Anne <mask>!", "  two  spaces\tand a tab\n", "野口 😀 ñandú café", ""};
  const fs::path root = testing::scratch_folder();
  for (const char* name : {"gpt2", "roberta", "options", "plain"}) {
    SCOPED_TRACE(name);
    const Tokenizer original = tokenizer_load((kFixtures / name).string());
    const fs::path dir = root / name;
    tokenizer_save(original, dir.string());
    EXPECT_FALSE(fs::exists(dir / "vocab.txt"));
    const Tokenizer loaded = tokenizer_load(dir.string());
    const TokenizerConfig& a = original.config();
    const TokenizerConfig& b = loaded.config();
    EXPECT_EQ(b.bpe, a.bpe);
    EXPECT_EQ(b.byte_level, a.byte_level);
    EXPECT_EQ(b.byte_level_decoder, a.byte_level_decoder);
    EXPECT_EQ(b.post_processor, a.post_processor);
    EXPECT_EQ(b.added_tokens, a.added_tokens);
    EXPECT_EQ(b.special, a.special);
    EXPECT_EQ(b.model_max_length, a.model_max_length);
    EXPECT_EQ(b.tokenizer_class,
              a.tokenizer_class.empty() ? "PreTrainedTokenizerFast" : a.tokenizer_class);
    for (std::string_view text : texts) {
      const Encoding x = original.encode_pair(text, "second", {});
      const Encoding y = loaded.encode_pair(text, "second", {});
      EXPECT_EQ(y.ids, x.ids) << text;
      EXPECT_EQ(y.offsets, x.offsets) << text;
      EXPECT_EQ(loaded.decode(y.ids, false), original.decode(x.ids, false));
    }
    EXPECT_EQ(tokenizer_to_json(loaded), tokenizer_to_json(original));
  }
}

TEST(TokenizerBpe, TokenizerJsonErrorsNameTheKey) {
  struct Case {
    const char* from;  // the first occurrence in GPT-2's tokenizer.json
    const char* to;
    const char* error;
  };
  const Case cases[] = {
      {"\"merges\":", "\"type\": \"BPE\", \"merged\":", "[tokenizer.json] model.merges: missing"},
      {"\"Ġ t\"", "\"zz t\"", "model.merges[0]: \"zz\" is not in the vocabulary"},
      {"\"Ġ t\"", "\"Ġt\"", "model.merges[0]: expected two tokens separated by a space"},
      {"\"Ġ t\"", "7", "model.merges[0]: expected \"a b\" or [\"a\", \"b\"]"},
      {"\"dropout\": null", "\"dropout\": 0.1", "model.dropout: unsupported"},
      {"\"fuse_unk\": false", "\"byte_fallback\": true", "model.byte_fallback: unsupported"},
      {"\"normalizer\": null", "\"normalizer\": {\"type\": \"NFC\"}",
       "normalizer: unsupported with model BPE"},
      {"\"pre_tokenizer\": {\n  \"type\": \"ByteLevel\"",
       "\"pre_tokenizer\": {\n  \"type\": \"Metaspace\"",
       "pre_tokenizer.type: unsupported \"Metaspace\" with model BPE"},
      {"\"pre_tokenizer\": {", "\"pre_tokenizer\": null, \"x\": {", "pre_tokenizer: missing"},
      {"\"decoder\": {\n  \"type\": \"ByteLevel\"", "\"decoder\": {\n  \"type\": \"BPEDecoder\"",
       "decoder.type: unsupported \"BPEDecoder\""},
      {"\"post_processor\": {\n  \"type\": \"ByteLevel\"",
       "\"post_processor\": {\n  \"type\": \"Sequence\"",
       "post_processor.type: unsupported \"Sequence\""},
      {"\"unk_token\": null", "\"unk_token\": \"<unk>\"",
       "the unknown token \"<unk>\" (model.unk_token) is not in the vocabulary"},
  };
  const std::string original = read_text(kFixtures / "gpt2/tokenizer.json");
  for (const Case& c : cases) {
    std::string json = original;
    const size_t at = json.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    json.replace(at, std::string_view(c.from).size(), c.to);
    const std::string message = error_of([&] { tokenizer_json_parse(json, "tokenizer.json"); });
    EXPECT_NE(message.find(c.error), std::string::npos) << message;
  }
}

TEST(TokenizerBpe, FolderWithMergesTxtOnlyNamesTokenizerJson) {
  const fs::path dir = testing::scratch_folder();
  for (const char* file : {"vocab.json", "merges.txt"}) std::ofstream(dir / file) << "{}\n";
  EXPECT_NE(error_of([&] { tokenizer_load(dir.string()); })
                .find("has merges.txt but no tokenizer.json"),
            std::string::npos);
}

TEST(TokenizerBpe, ByteLevelTableIsGpt2s) {
  std::vector<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t c = byte_level_char(static_cast<uint8_t>(b));
    EXPECT_EQ(byte_level_byte(c), std::optional<uint8_t>(static_cast<uint8_t>(b)));
    seen.push_back(c);
  }
  EXPECT_EQ(byte_level_char(' '), U'\u0120');   // "Ġ"
  EXPECT_EQ(byte_level_char('\n'), U'\u010A');  // "Ċ"
  EXPECT_EQ(byte_level_char('a'), U'a');
  EXPECT_EQ(byte_level_char(0xAD), U'\u0143');  // the last of the 68 remapped bytes
  EXPECT_EQ(byte_level_byte(U' '), std::nullopt);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
}

TEST(TokenizerBpe, ByteLevelDecoderRepairsUtf8AsRust) {
  auto decode = [](std::vector<std::string_view> tokens) { return byte_level_decode(tokens); };
  // From tokenizers' decoders.ByteLevel().decode.
  EXPECT_EQ(decode({"Ã", "Ń", "ðŁĺ", "Ģ", "ÃŃ", "a b", "Ġx"}), "í😀ía b x");
  EXPECT_EQ(decode({"í", "łĢ"}), "\uFFFD\uFFFD\uFFFD");  // a surrogate: three bytes replaced
  // Python's b"...".decode("utf-8", "replace"), the same maximal-subpart rule.
  EXPECT_EQ(decode({"Ã"}), "\uFFFD");                       // C3
  EXPECT_EQ(decode({"ðŁ"}), "\uFFFD");                      // F0 9F
  EXPECT_EQ(decode({"aÿb"}), "a\uFFFDb");                   // FF
  EXPECT_EQ(decode({"âĤ¬x"}), "€x");                        // E2 82 AC
  EXPECT_EQ(decode({"ôĲĢĢ"}), "\uFFFD\uFFFD\uFFFD\uFFFD");  // F4 90 80 80: past U+10FFFF
  EXPECT_EQ(decode({"À¯"}), "\uFFFD\uFFFD");                // C0 AF: overlong
}

}  // namespace
}  // namespace kiln
