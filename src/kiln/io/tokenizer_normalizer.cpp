// BertNormalizer (clean text, CJK spacing, strip accents, lowercase) and BertPreTokenizer.
#include "kiln/io/tokenizer_normalizer.h"

#include "kiln/io/tokenizer_unicode.h"

namespace kiln {

void bert_normalize(std::u32string_view original, size_t begin, size_t end,
                    const NormalizerOptions& options, NormalizedText& out) {
  const bool strip = options.strips_accents();
  std::u32string stripped, lowered;
  for (size_t i = begin; i < end; ++i) {
    char32_t c = original[i];
    if (options.clean_text) {
      if (c == 0 || c == 0xFFFD || bert_is_control(c)) continue;
      if (bert_is_whitespace(c)) c = ' ';
    }
    // HF order: CJK spacing, then strip accents, then lowercase; every character produced
    // keeps the origin of the character it came from.
    const auto origin = static_cast<uint32_t>(i);
    const bool chinese = options.handle_chinese_chars && bert_is_chinese_char(c);
    if (chinese) {
      out.chars.push_back(' ');
      out.origin.push_back(origin);
    }
    stripped.clear();
    if (strip) {
      bert_append_stripped(c, stripped);
    } else {
      stripped.push_back(c);
    }
    for (char32_t s : stripped) {
      lowered.clear();
      if (options.lowercase) {
        bert_append_lowercase(s, lowered);
      } else {
        lowered.push_back(s);
      }
      for (char32_t l : lowered) {
        out.chars.push_back(l);
        out.origin.push_back(origin);
      }
    }
    if (chinese) {
      out.chars.push_back(' ');
      out.origin.push_back(origin);
    }
  }
}

void bert_pre_tokenize(const NormalizedText& text, size_t begin, size_t end,
                       std::vector<Span>& words) {
  size_t start = begin;
  for (size_t i = begin; i < end; ++i) {
    char32_t c = text.chars[i];
    const bool space = unicode_is_white_space(c);
    if (!space && !bert_is_punctuation(c)) continue;
    if (start < i) words.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(i)});
    if (!space) words.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1)});
    start = i + 1;
  }
  if (start < end) words.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
}

}  // namespace kiln
