// GPT-2's byte-level steps as Hugging Face tokenizers runs them: the ByteLevel pre-tokenizer
// (GPT-2's split regex, then every UTF-8 byte as a printable character), the ByteLevel decoder,
// and the offset trimming of the ByteLevel and RobertaProcessing post-processors.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/io/tokenizer_encoding.h"
#include "kiln/io/tokenizer_normalizer.h"

namespace kiln {

// The character that stands for `byte` (GPT-2's bytes_to_unicode), and back.
char32_t byte_level_char(uint8_t byte);
std::optional<uint8_t> byte_level_byte(char32_t c);

// Appends the byte-level characters of text.chars[begin, end) to `out` and its words to `words`
// (ranges of out.chars): the prefix space if asked, then GPT-2's regex pieces, each character
// written as its UTF-8 bytes. Every byte keeps the origin of the character it came from; the
// prefix space takes the first character's.
void byte_level_pre_tokenize(const NormalizedText& text, size_t begin, size_t end,
                             const ByteLevelOptions& options, NormalizedText& out,
                             std::vector<Span>& words);

// The pieces of GPT-2's split regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// in text, appended to `out` as ranges of text.
void byte_level_split(std::u32string_view text, std::vector<Span>& out);

// The leading and trailing spaces (byte-level spaces or White_Space) of a token's string.
TokenSpaces byte_level_token_spaces(std::u32string_view token);

// HF's ByteLevel process_offsets: each token's offsets leave out its leading and trailing spaces,
// except the one added prefix space of the first token when `add_prefix_space`.
void byte_level_trim_offsets(Encoding& encoding, bool add_prefix_space);

// The ByteLevel decoder: each token's characters back to bytes (a token with a character outside
// the table keeps its own UTF-8), then the bytes read as UTF-8 with invalid sequences replaced by
// U+FFFD as Rust's String::from_utf8_lossy does.
std::string byte_level_decode(std::span<const std::string_view> tokens);

}  // namespace kiln
