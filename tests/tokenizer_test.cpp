// The WordPiece tokenizer by hand: normalizer, pre-tokenizer, WordPiece, special tokens, pairs,
// truncation, padding, offsets, decoding, the file readers and writers, and their errors.
// Expected ids are those of bert-base-uncased's vocab.txt (as BertTokenizerFast gives them).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/io/tokenizer_files.h"
#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<int32_t>;

const fs::path kVocab = fs::path(KILN_SOURCE_DIR) / "data/vocab/bert-base-uncased-vocab.txt";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const Tokenizer& uncased() {
  static const Tokenizer tokenizer = tokenizer_load_vocab(kVocab.string());
  return tokenizer;
}

const Tokenizer& cased() {
  static const Tokenizer tokenizer = tokenizer_vocab_parse(read_file(kVocab), kVocab.string(),
                                                           R"({"do_lower_case": false})", "config");
  return tokenizer;
}

// The message of the Error `body` throws ("" if none).
template <typename Body>
std::string error_of(Body body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

std::vector<CharRange> ranges(std::initializer_list<std::pair<size_t, size_t>> list) {
  std::vector<CharRange> out;
  for (auto [start, end] : list) out.push_back({start, end});
  return out;
}

// A small tokenizer.json (BERT layout) around a given vocab object.
std::string tiny_json(const std::string& vocab, const std::string& extra = "") {
  return R"({"version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [{"id": 0, "content": "[UNK]", "single_word": false, "lstrip": false,
                      "rstrip": false, "normalized": false, "special": true}],
    "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                   "strip_accents": null, "lowercase": true},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},)" +
         extra + R"(
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 100, "vocab": )" +
         vocab + "}}";
}

const char* kTinyVocab =
    R"({"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "un": 4, "##aff": 5, "##able": 6, "hello": 7, "!": 8})";

TEST(TokenizerUnicode, HfCharacterClasses) {
  EXPECT_TRUE(bert_is_whitespace(U'\t'));
  EXPECT_TRUE(bert_is_whitespace(0x3000));
  EXPECT_FALSE(bert_is_whitespace(0x0B));  // a control to clean_text, dropped
  EXPECT_TRUE(unicode_is_white_space(0x0B));
  EXPECT_FALSE(unicode_is_white_space(0x200B));  // zero width space is Cf, not White_Space
  EXPECT_TRUE(bert_is_control(0x200B));
  EXPECT_TRUE(bert_is_control(0xE000));    // private use
  EXPECT_FALSE(bert_is_control(0x0890));   // Cf only since Unicode 14: HF keeps it
  EXPECT_TRUE(bert_is_punctuation(U'$'));  // ASCII symbols count as punctuation
  EXPECT_TRUE(bert_is_punctuation(0x00BF));
  EXPECT_FALSE(bert_is_punctuation(0x2E52));  // Po only in newer Unicode
  EXPECT_TRUE(bert_is_chinese_char(0x91CE));
  EXPECT_FALSE(bert_is_chinese_char(0xD55C));  // Hangul is not
  std::u32string out;
  bert_append_lowercase(0x0130, out);  // İ lowercases to i + combining dot, as Rust does
  EXPECT_EQ(out, (std::u32string{U'i', 0x0307}));
  out.clear();
  bert_append_stripped(0x00E9, out);
  EXPECT_EQ(out, U"e");
  EXPECT_EQ(utf8_decode("a\xC3\xA9", "t"), (std::u32string{U'a', 0xE9}));
  EXPECT_EQ(utf8_encode(U"\u91CE!"), "\xE9\x87\x8E!");
  EXPECT_NE(
      error_of([] { utf8_decode("ok\xFFno", "text"); }).find("[text] invalid UTF-8 at byte 2"),
      std::string::npos);
}

TEST(TokenizerNormalizer, TracksOriginalCharacters) {
  using namespace std::string_literals;
  const std::u32string text = U"A\u00C9\u0000\u91CE\u2003b"s;
  NormalizedText out;
  bert_normalize(text, 0, text.size(), {}, out);
  EXPECT_EQ(out.chars, U"ae \u91CE  b");
  EXPECT_EQ(out.origin, (std::vector<uint32_t>{0, 1, 3, 3, 3, 4, 5}));
  NormalizedText kept;
  bert_normalize(text, 0, text.size(), {true, false, std::nullopt, false}, kept);
  EXPECT_EQ(kept.chars, U"A\u00C9\u91CE b");
}

TEST(TokenizerNormalizer, PreTokenizerSplitsOnSpaceAndPunctuation) {
  NormalizedText text;
  const std::u32string input = U"Hey friend!     How are you?!?";
  bert_normalize(input, 0, input.size(), {false, false, false, false}, text);
  std::vector<Span> words;
  bert_pre_tokenize(text, 0, text.chars.size(), words);
  std::vector<std::pair<uint32_t, uint32_t>> got;
  for (Span w : words) got.emplace_back(w.begin, w.end);
  EXPECT_EQ(
      got,
      (std::vector<std::pair<uint32_t, uint32_t>>{
          {0, 3}, {4, 10}, {10, 11}, {16, 19}, {20, 23}, {24, 27}, {27, 28}, {28, 29}, {29, 30}}));
}

TEST(Tokenizer, SingleTextIdsAndOffsets) {
  const Encoding e = uncased().encode("Hello, world!", {});
  EXPECT_EQ(e.ids, (Ids{101, 7592, 1010, 2088, 999, 102}));
  EXPECT_EQ(e.type_ids, (Ids{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(e.attention_mask, (Ids{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(e.special_tokens_mask, (Ids{1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(e.offsets, ranges({{0, 0}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}}));
  EXPECT_EQ(e.word_ids, (Ids{-1, 0, 1, 2, 3, -1}));
}

TEST(Tokenizer, WordPiecesAccentsAndCjk) {
  EXPECT_EQ(uncased().tokenize("unaffable"), (std::vector<std::string>{"una", "##ffa", "##ble"}));
  // Offsets count code points of the original: é is one character, 野 gets its own word.
  const Encoding e = uncased().encode("Café野x", {});
  EXPECT_EQ(uncased().tokenize("Café野x"), (std::vector<std::string>{"cafe", "野", "x"}));
  EXPECT_EQ(e.offsets, ranges({{0, 0}, {0, 4}, {4, 5}, {5, 6}, {0, 0}}));
  EXPECT_EQ(cased().tokenize("Café"), (std::vector<std::string>{"[UNK]"}));
}

TEST(Tokenizer, LongWordsAndEmptyTexts) {
  const Encoding e = uncased().encode(" " + std::string(101, 'a') + " b", {});
  EXPECT_EQ(e.ids, (Ids{101, 100, 1038, 102}));
  EXPECT_EQ(e.offsets[1], (CharRange{1, 102}));
  // 100 characters is still a word: "aaa" then 49 "##aa".
  EXPECT_EQ(uncased().encode(std::string(100, 'a'), {}).ids.size(), 52u);
  for (const char* empty : {"", " \t\n", "\x01\x02"}) {
    EXPECT_EQ(uncased().encode(empty, {}).ids, (Ids{101, 102})) << empty;
  }
}

TEST(Tokenizer, SpecialTokensTypedInTheText) {
  const Encoding e = uncased().encode("a [SEP]b[MASK] [mask]", {});
  EXPECT_EQ(e.ids, (Ids{101, 1037, 102, 1038, 103, 1031, 7308, 1033, 102}));
  EXPECT_EQ(e.special_tokens_mask, (Ids{1, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(e.offsets[2], (CharRange{2, 7}));
}

TEST(Tokenizer, PairsGetTypeAndSequenceIds) {
  const Encoding e = uncased().encode_pair("a b", "c", {});
  EXPECT_EQ(e.ids, (Ids{101, 1037, 1038, 102, 1039, 102}));
  EXPECT_EQ(e.type_ids, (Ids{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(e.sequence_ids, (Ids{-1, 0, 0, -1, 1, -1}));
  EXPECT_EQ(e.offsets, ranges({{0, 0}, {0, 1}, {2, 3}, {0, 0}, {0, 1}, {0, 0}}));
  EncodeOptions raw;
  raw.add_special_tokens = false;
  EXPECT_EQ(uncased().encode_pair("a b", "c", raw).ids, (Ids{1037, 1038, 1039}));
}

TEST(Tokenizer, TruncationStrategies) {
  EncodeOptions o;
  o.max_length = 7;
  o.truncation = Truncation::longest_first;  // 4 tokens left: the longer text gives way first
  EXPECT_EQ(uncased().encode_pair("a b c d e", "x y", o).ids,
            (Ids{101, 1037, 1038, 102, 1060, 1061, 102}));
  o.truncation = Truncation::only_first;
  EXPECT_EQ(uncased().encode_pair("a b c d e", "x y", o).ids,
            (Ids{101, 1037, 1038, 102, 1060, 1061, 102}));
  o.truncation = Truncation::only_second;
  EXPECT_EQ(uncased().encode_pair("a", "x y z w", o).ids,
            (Ids{101, 1037, 102, 1060, 1061, 1062, 102}));
  EXPECT_NE(error_of([&] { uncased().encode_pair("a b c d e", "x y", o); }).find("only_second"),
            std::string::npos);
  o.truncation = Truncation::longest_first;
  o.max_length = 2;  // room for the special tokens only
  EXPECT_EQ(uncased().encode("a b c", o).ids, (Ids{101, 102}));
  o.max_length = 1;  // HF silently skips truncation here; Kiln says why it cannot
  EXPECT_NE(error_of([&] { uncased().encode("a b c", o); }).find("no room for the 2 special"),
            std::string::npos);
  o.max_length = 4;
  o.truncation_side = Side::left;
  EXPECT_EQ(uncased().encode("a b c", o).ids, (Ids{101, 1038, 1039, 102}));
}

TEST(Tokenizer, StrideGivesOverlappingWindows) {
  EncodeOptions o;
  o.truncation = Truncation::only_second;
  o.max_length = 8;  // 3 special tokens, 1 question token: 4 context tokens per window
  o.stride = 2;
  const Encoding e = uncased().encode_pair("q", "a b c d e f g", o);
  EXPECT_EQ(e.ids, (Ids{101, 1053, 102, 1037, 1038, 1039, 1040, 102}));
  ASSERT_EQ(e.overflowing.size(), 2u);
  EXPECT_EQ(e.overflowing[0].ids, (Ids{101, 1053, 102, 1039, 1040, 1041, 1042, 102}));
  EXPECT_EQ(e.overflowing[1].ids, (Ids{101, 1053, 102, 1041, 1042, 1043, 102}));
  EXPECT_EQ(e.overflowing[1].offsets[3], (CharRange{8, 9}));  // "e" in the second text
  EXPECT_EQ(e.overflowing[1].sequence_ids, (Ids{-1, 0, -1, 1, 1, 1, -1}));
  o.stride = 4;
  EXPECT_NE(error_of([&] { uncased().encode_pair("q", "a b c d e f g", o); }).find("stride 4"),
            std::string::npos);
  o.stride = 7;  // above 8 less 2: refused even where nothing needs truncating, as by HF
  EXPECT_NE(error_of([&] { uncased().encode("q", o); }).find("stride 7 is more than max_length 8"),
            std::string::npos);
}

TEST(Tokenizer, Padding) {
  EncodeOptions o;
  o.padding = Padding::max_length;
  o.max_length = 6;
  Encoding e = uncased().encode("a b", o);
  EXPECT_EQ(e.ids, (Ids{101, 1037, 1038, 102, 0, 0}));
  EXPECT_EQ(e.attention_mask, (Ids{1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(e.special_tokens_mask, (Ids{1, 0, 0, 1, 1, 1}));
  o.padding_side = Side::left;
  EXPECT_EQ(uncased().encode("a b", o).ids, (Ids{0, 0, 101, 1037, 1038, 102}));
  o = {};
  o.padding = Padding::longest;
  o.pad_to_multiple_of = 4;
  const std::vector<std::string_view> batch = {"a", "a b c d"};
  const auto padded = uncased().encode_batch(batch, o);
  EXPECT_EQ(padded[0].ids, (Ids{101, 1037, 102, 0, 0, 0, 0, 0}));
  EXPECT_EQ(padded[1].size(), 8u);
  o.padding = Padding::max_length;  // no max_length and no model_max_length in vocab.txt
  EXPECT_NE(error_of([&] { uncased().encode("a", o); }).find("model_max_length"),
            std::string::npos);
}

TEST(Tokenizer, Decode) {
  const Encoding e = uncased().encode("Hello , world ! unaffable [MASK]", {});
  EXPECT_EQ(e.ids, (Ids{101, 7592, 1010, 2088, 999, 14477, 20961, 3468, 103, 102}));
  EXPECT_EQ(uncased().decode(e.ids), "hello, world! unaffable");
  EXPECT_EQ(uncased().decode(e.ids, false), "[CLS] hello, world! unaffable [MASK] [SEP]");
}

TEST(Tokenizer, InvalidUtf8TextIsAnError) {
  EXPECT_NE(error_of([] { uncased().encode("ab\xC3", {}); }).find("invalid UTF-8 at byte 2"),
            std::string::npos);
}

TEST(TokenizerFiles, VocabTxtErrors) {
  EXPECT_NE(error_of([] {
              tokenizer_load_vocab("/nonexistent/vocab.txt");
            }).find("[/nonexistent/vocab.txt]"),
            std::string::npos);
  const std::string no_unk =
      error_of([] { tokenizer_vocab_parse("[PAD]\n[CLS]\n[SEP]\nhello\n", "v.txt"); });
  EXPECT_NE(no_unk.find("[v.txt] the vocabulary has no unknown token \"[UNK]\""), std::string::npos)
      << no_unk;
  const std::string bad = error_of([] { tokenizer_vocab_parse("[UNK]\nok\nb\xFFx\n", "v.txt"); });
  EXPECT_NE(bad.find("[v.txt:3] invalid UTF-8 at byte"), std::string::npos) << bad;
  const std::string config = error_of([] {
    tokenizer_vocab_parse("[UNK]\n[CLS]\n[SEP]\n", "v.txt", R"({"do_lower_case": "yes"})",
                          "c.json");
  });
  EXPECT_NE(config.find("[c.json] do_lower_case: expected true or false"), std::string::npos)
      << config;
  // Special tokens missing from the vocabulary get ids after it, as in transformers.
  const Tokenizer small = tokenizer_vocab_parse("[UNK]\n[CLS]\n", "v.txt");
  EXPECT_EQ(small.encode("x [SEP] [PAD]", {}).ids, (Ids{1, 0, 2, 3, 2}));
  EXPECT_EQ(small.vocab_size(), 5);
  EXPECT_EQ(small.id_to_token(4), "[MASK]");
}

TEST(TokenizerFiles, VocabTxtLinesAsHf) {
  // Trailing whitespace trimmed, \r\n accepted; a repeated token looks up to its last line.
  const Tokenizer t = tokenizer_vocab_parse(
      "[PAD]\r\n[UNK]  \n[CLS]\n[SEP]\n[MASK]\nhello\nworld\nhello\n##s\n", "v.txt");
  EXPECT_EQ(t.encode("hello worlds", {}).ids, (Ids{2, 7, 6, 8, 3}));
  EXPECT_EQ(t.id_to_token(5), "hello");
  EXPECT_EQ(t.vocab_size(), 8);
  EXPECT_EQ(t.pad_id(), 0);
}

TEST(TokenizerFiles, TokenizerConfigOptions) {
  const Tokenizer t = tokenizer_vocab_parse(read_file(kVocab), "vocab.txt", R"({
      "do_lower_case": true, "strip_accents": false, "tokenize_chinese_chars": false,
      "model_max_length": 8, "padding_side": "left",
      "cls_token": {"content": "[CLS]", "__type": "AddedToken"}})",
                                            "tokenizer_config.json");
  EXPECT_EQ(t.tokenize("Café"), (std::vector<std::string>{"[UNK]"}));  // "café" is no vocab entry
  EXPECT_EQ(t.tokenize("野口"),
            (std::vector<std::string>{"野", "##口"}));  // one word, no CJK spacing
  EncodeOptions o = t.config().defaults;
  o.truncation = Truncation::longest_first;
  o.padding = Padding::max_length;
  EXPECT_EQ(t.encode("a b c d e f g h i", o).size(), 8u);
  EXPECT_EQ(t.encode("a", o).ids, (Ids{0, 0, 0, 0, 0, 101, 1037, 102}));
}

TEST(TokenizerFiles, TokenizerJsonErrors) {
  auto message = [](const std::string& json) {
    return error_of([&] { tokenizer_json_parse(json, "tokenizer.json"); });
  };
  EXPECT_NE(message("{\"model\": ").find("[tokenizer.json] invalid JSON"), std::string::npos);
  EXPECT_NE(message("[]").find("expected an object"), std::string::npos);
  EXPECT_NE(message(tiny_json("[1, 2]")).find("[tokenizer.json] model.vocab: expected an object"),
            std::string::npos);
  EXPECT_NE(
      message(tiny_json(R"({"[UNK]": "zero"})")).find("model.vocab.[UNK]: expected an integer"),
      std::string::npos);
  EXPECT_NE(message(tiny_json(R"({"[UNK]": -3})")).find("out of range"), std::string::npos);
  EXPECT_NE(message(tiny_json(R"({"a": 0})")).find("no unknown token \"[UNK]\""),
            std::string::npos);
  EXPECT_NE(
      message(tiny_json(R"({"[UNK]": 0, "a": 5})")).find("model.vocab.a: id 5 is not one of 0..1"),
      std::string::npos);
  std::string bpe = tiny_json(kTinyVocab);
  bpe.replace(bpe.find("\"type\": \"WordPiece\", \"unk"), 19, "\"type\": \"Unigram\"");
  EXPECT_NE(message(bpe).find("model.type: unsupported \"Unigram\""), std::string::npos);
  std::string no_pre = tiny_json(kTinyVocab);
  no_pre.replace(no_pre.find("BertPreTokenizer"), 16, "Whitespace");
  EXPECT_NE(message(no_pre).find("pre_tokenizer"), std::string::npos);
  std::string bad_template = tiny_json(kTinyVocab);
  bad_template.replace(bad_template.find("\"sep\": [\"[SEP]\", 2]"), 19, "\"sep\": [\"[SEP]\"]");
  EXPECT_NE(message(bad_template).find("post_processor.sep: expected [token, id]"),
            std::string::npos);
}

TEST(TokenizerFiles, TokenizerJsonBertProcessingAndSettings) {
  const Tokenizer t = tokenizer_json_parse(
      tiny_json(
          kTinyVocab,
          R"( "truncation": {"direction": "Right", "max_length": 5, "strategy": "LongestFirst", "stride": 0},)"),
      "tokenizer.json");
  EXPECT_EQ(t.tokenize("UNAFFABLE!"), (std::vector<std::string>{"un", "##aff", "##able", "!"}));
  // The file's truncation is the default; explicit options override it.
  EXPECT_EQ(t.encode("unaffable hello").ids, (Ids{1, 4, 5, 6, 2}));
  EXPECT_EQ(t.encode("unaffable hello", {}).ids, (Ids{1, 4, 5, 6, 7, 2}));
  EXPECT_EQ(t.encode_pair("hello", "hello", {}).type_ids, (Ids{0, 0, 0, 1, 1}));
}

TEST(TokenizerFiles, TokenizerJsonTemplateProcessing) {
  // HF's serialization of a template; this one puts the second text first, with type id 2.
  std::string json = tiny_json(kTinyVocab);
  const std::string bert =
      R"("post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},)";
  json.replace(json.find(bert), bert.size(), R"("post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [{"Sequence": {"id": "B", "type_id": 2}}, {"SpecialToken": {"id": "[SEP]", "type_id": 2}},
               {"Sequence": {"id": "A", "type_id": 0}}],
      "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
                         "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}},)");
  const Tokenizer t = tokenizer_json_parse(json, "tokenizer.json");
  EXPECT_EQ(t.encode("hello", {}).ids, (Ids{1, 7}));
  const Encoding e = t.encode_pair("hello", "un", {});
  EXPECT_EQ(e.ids, (Ids{4, 2, 7}));
  EXPECT_EQ(e.type_ids, (Ids{2, 2, 0}));
  EXPECT_EQ(e.sequence_ids, (Ids{1, -1, 0}));
  std::string undefined = json;
  const std::string sep_piece = R"({"id": "[SEP]", "type_id": 2})";
  undefined.replace(undefined.find(sep_piece), sep_piece.size(),
                    R"({"id": "[XXX]", "type_id": 2})");
  EXPECT_NE(error_of([&] { tokenizer_json_parse(undefined, "tokenizer.json"); })
                .find("[tokenizer.json] the post-processor template uses the undefined special "
                      "token \"[XXX]\""),
            std::string::npos);
}

TEST(TokenizerFiles, SaveAndLoadRoundTrip) {
  const fs::path dir = fs::path(::testing::TempDir()) / "kiln_tokenizer_roundtrip";
  fs::remove_all(dir);
  TokenizerConfig config = cased().config();
  config.model_max_length = 128;
  config.defaults.truncation_side = Side::left;
  const Tokenizer original(std::move(config));
  tokenizer_save(original, dir.string());
  for (const char* file :
       {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"}) {
    EXPECT_TRUE(fs::exists(dir / file)) << file;
  }
  EXPECT_EQ(read_file(dir / "vocab.txt"), read_file(kVocab));
  const Tokenizer from_json = tokenizer_load(dir.string());
  const Tokenizer from_vocab =
      tokenizer_load_vocab((dir / "vocab.txt").string(), (dir / "tokenizer_config.json").string());
  for (const Tokenizer* loaded : {&from_json, &from_vocab}) {
    EXPECT_EQ(loaded->config().normalizer, original.config().normalizer);
    EXPECT_EQ(loaded->config().added_tokens, original.config().added_tokens);
    EXPECT_EQ(loaded->config().post_processor, original.config().post_processor);
    EXPECT_EQ(loaded->config().model_max_length, std::optional<size_t>(128));
    EXPECT_EQ(loaded->config().defaults.truncation_side, Side::left);
    for (const char* text : {"Hello World", "Café 野口 [MASK] 😀", ""}) {
      EXPECT_EQ(loaded->encode_pair(text, "Second", {}).ids,
                original.encode_pair(text, "Second", {}).ids);
    }
  }
  EXPECT_EQ(tokenizer_to_json(from_json), tokenizer_to_json(original));
  fs::remove_all(dir);
}

TEST(TokenizerFiles, FolderWithoutTokenizerFiles) {
  const fs::path dir = fs::path(::testing::TempDir()) / "kiln_tokenizer_empty";
  fs::create_directories(dir);
  EXPECT_NE(
      error_of([&] { tokenizer_load(dir.string()); }).find("neither tokenizer.json nor vocab.txt"),
      std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
