// BertNormalizer and BertPreTokenizer: text to normalized characters, each tracing back to the
// original character it came from (for offsets), then split into words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct NormalizerOptions {
  bool clean_text = true;             // drop \0, U+FFFD and controls; whitespace becomes ' '
  bool handle_chinese_chars = true;   // CJK ideographs become words of their own
  std::optional<bool> strip_accents;  // NFD without nonspacing marks; unset: follows lowercase
  bool lowercase = true;

  bool strips_accents() const { return strip_accents.value_or(lowercase); }
  bool operator==(const NormalizerOptions&) const = default;
};

// Normalized characters; origin[i] is the index of the original character chars[i] came from.
struct NormalizedText {
  std::u32string chars;
  std::vector<uint32_t> origin;

  void clear() {
    chars.clear();
    origin.clear();
  }
};

// A half-open range [begin, end) of positions.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// Appends the normalization of original[begin, end) to `out` (origin indices into `original`).
void bert_normalize(std::u32string_view original, size_t begin, size_t end,
                    const NormalizerOptions& options, NormalizedText& out);

// Appends the words of text.chars[begin, end) to `words`: split on White_Space (removed) and
// around each punctuation character (kept as a word of its own).
void bert_pre_tokenize(const NormalizedText& text, size_t begin, size_t end,
                       std::vector<Span>& words);

}  // namespace kiln
