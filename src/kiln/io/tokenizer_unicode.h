// Unicode for the tokenizer: UTF-8 decoding and the character classes and mappings exactly as
// Hugging Face's BertNormalizer / BertPreTokenizer apply them (tables probed from `tokenizers`).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace kiln {

// Code points of `text`; invalid UTF-8 is an Error naming `where` and the byte offset.
std::u32string utf8_decode(std::string_view text, std::string_view where);
void utf8_append(char32_t c, std::string& out);
std::string utf8_encode(std::u32string_view text);

// Rust's char::is_whitespace (Unicode White_Space): what BertPreTokenizer splits on.
bool unicode_is_white_space(char32_t c);
// Rust regex's \w (letters, marks, decimal digits, connector punctuation, joiners): where an
// added token with single_word may not touch.
bool unicode_is_word_char(char32_t c);
// BertNormalizer's clean_text: these become ' ' (\t \n \r and White_Space that is not a control).
bool bert_is_whitespace(char32_t c);
// Rust regex's \w (letters, marks, decimal digits, connector punctuation, joiners): where an
// added token with single_word may not touch.
bool unicode_is_word_char(char32_t c);
// BertNormalizer's clean_text drops these (besides \0 and U+FFFD): categories Cc Cf Co as HF's
// tables have them, except \t \n \r.
bool bert_is_control(char32_t c);
// ASCII punctuation or Unicode P* (HF's tables): BertPreTokenizer isolates each one.
bool bert_is_punctuation(char32_t c);
// \p{L} and \p{N} of GPT-2's split regex as HF's ByteLevel pre-tokenizer runs it (Oniguruma's
// tables); its \s is unicode_is_white_space.
bool byte_level_is_letter(char32_t c);
bool byte_level_is_number(char32_t c);
// The CJK ideograph blocks that tokenize_chinese_chars surrounds with spaces.
bool bert_is_chinese_char(char32_t c);

// strip_accents for one character: its NFD decomposition without nonspacing marks (Mn as HF's
// tables have them), appended to `out`. Canonical reordering is skipped: it only moves combining
// characters, and all but a few rare spacing ones are dropped here anyway.
void bert_append_stripped(char32_t c, std::u32string& out);
// Rust's char::to_lowercase (full mapping: U+0130 gives two code points), appended to `out`.
void bert_append_lowercase(char32_t c, std::u32string& out);

namespace unicode_tables {

struct CodeRange {
  char32_t first, last;
};
// A code point and what HF maps it to (one or two code points; 0 pads; {0, 0} maps to nothing).
struct CodeMapping {
  char32_t from;
  char32_t to[2];
};

// Sorted, disjoint; defined in tokenizer_unicode_tables.cpp (generated).
extern const std::span<const CodeRange> control;
extern const std::span<const CodeRange> punctuation;
extern const std::span<const CodeRange> nonspacing_mark;
// Defined in tokenizer_byte_level_tables.cpp (generated).
extern const std::span<const CodeRange> byte_level_letter;
extern const std::span<const CodeRange> byte_level_number;
// Sorted by `from`: where HF's results differ from utf8proc's on this build's Unicode version.
extern const std::span<const CodeMapping> lowercase;
extern const std::span<const CodeMapping> strip_accents;

}  // namespace unicode_tables
}  // namespace kiln
