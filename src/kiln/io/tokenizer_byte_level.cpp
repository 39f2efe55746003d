// The ByteLevel pre-tokenizer, decoder and offset trimming of HF tokenizers (byte_level.rs).
#include "kiln/io/tokenizer_byte_level.h"

#include <algorithm>
#include <array>

#include "kiln/io/tokenizer_unicode.h"

namespace kiln {
namespace {

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the others (controls,
// space, U+007F..U+00A0, U+00AD) for 256, 257, ... in byte order.
constexpr std::array<char32_t, 256> kByteChars = [] {
  std::array<char32_t, 256> chars{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    chars[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return chars;
}();

constexpr char32_t kSpaceChar = 0x120;  // "Ġ", the byte-level space

bool is_other(char32_t c) {
  return !unicode_is_white_space(c) && !byte_level_is_letter(c) && !byte_level_is_number(c);
}

// The end of the regex match that starts at text[i] (the alternatives in order, each greedy).
size_t match_end(std::u32string_view text, size_t i) {
  const size_t n = text.size();
  const char32_t c = text[i];
  if (c == '\'' && i + 1 < n) {
    const char32_t d = text[i + 1];
    if (d == 's' || d == 't' || d == 'm' || d == 'd') return i + 2;
    if (i + 2 < n) {
      const char32_t e = text[i + 2];
      if ((d == 'r' && e == 'e') || (d == 'v' && e == 'e') || (d == 'l' && e == 'l')) return i + 3;
    }
  }
  // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": a space alone never matches them.
  for (bool (*in_class)(char32_t) : {byte_level_is_letter, byte_level_is_number, is_other}) {
    size_t j = c == ' ' ? i + 1 : i;
    if (j < n && in_class(text[j])) {
      while (j < n && in_class(text[j])) ++j;
      return j;
    }
  }
  // "\s+(?!\S)" leaves the last space of a run before a non-space to the next piece; a run of
  // one there is "\s+".
  size_t j = i;
  while (j < n && unicode_is_white_space(text[j])) ++j;
  return j == n || j - i == 1 ? j : j - 1;
}

}  // namespace

char32_t byte_level_char(uint8_t byte) { return kByteChars[byte]; }

std::optional<uint8_t> byte_level_byte(char32_t c) {
  static const auto kBytes = [] {
    std::array<int16_t, 256 + 68> bytes;
    bytes.fill(-1);
    for (int b = 0; b < 256; ++b) bytes[kByteChars[b]] = static_cast<int16_t>(b);
    return bytes;
  }();
  if (c >= kBytes.size() || kBytes[c] < 0) return std::nullopt;
  return static_cast<uint8_t>(kBytes[c]);
}

void byte_level_split(std::u32string_view text, std::vector<Span>& out) {
  for (size_t i = 0; i < text.size();) {
    const size_t end = match_end(text, i);
    out.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(end)});
    i = end;
  }
}

void byte_level_pre_tokenize(const NormalizedText& text, size_t begin, size_t end,
                             const ByteLevelOptions& options, NormalizedText& out,
                             std::vector<Span>& words) {
  if (begin == end) return;
  NormalizedText part;
  if (options.add_prefix_space && text.chars[begin] != ' ') {
    part.chars.push_back(' ');
    part.origin.push_back(text.origin[begin]);
  }
  part.chars.append(text.chars, begin, end - begin);
  part.origin.insert(part.origin.end(), text.origin.begin() + static_cast<ptrdiff_t>(begin),
                     text.origin.begin() + static_cast<ptrdiff_t>(end));
  std::vector<Span> pieces;
  if (options.use_regex) {
    byte_level_split(part.chars, pieces);
  } else {
    pieces.push_back({0, static_cast<uint32_t>(part.chars.size())});
  }
  std::string bytes;
  for (Span piece : pieces) {
    const auto word_begin = static_cast<uint32_t>(out.chars.size());
    for (uint32_t i = piece.begin; i < piece.end; ++i) {
      bytes.clear();
      utf8_append(part.chars[i], bytes);
      for (char b : bytes) {
        out.chars.push_back(byte_level_char(static_cast<uint8_t>(b)));
        out.origin.push_back(part.origin[i]);
      }
    }
    words.push_back({word_begin, static_cast<uint32_t>(out.chars.size())});
  }
}

TokenSpaces byte_level_token_spaces(std::u32string_view token) {
  auto space = [](char32_t c) { return c == kSpaceChar || unicode_is_white_space(c); };
  TokenSpaces spaces;
  while (spaces.leading < token.size() && space(token[spaces.leading])) ++spaces.leading;
  while (spaces.trailing < token.size() && space(token[token.size() - 1 - spaces.trailing]))
    ++spaces.trailing;
  return spaces;
}

void byte_level_trim_offsets(Encoding& encoding, bool add_prefix_space) {
  for (size_t i = 0; i < encoding.spaces.size(); ++i) {
    CharRange& offset = encoding.offsets[i];
    size_t leading = encoding.spaces[i].leading;
    const size_t trailing = encoding.spaces[i].trailing;
    if (leading > 0) {
      // HF keeps the one space it added before the first token (offset 0 counts as first).
      const bool first = i == 0 || offset.start == 0;
      if (first && add_prefix_space && leading == 1) leading = 0;
      offset.start = std::min(offset.start + leading, offset.end);
    }
    if (trailing > 0 && offset.end >= trailing)
      offset.end = std::max(offset.end - trailing, offset.start);
  }
}

std::string byte_level_decode(std::span<const std::string_view> tokens) {
  std::string bytes;
  for (std::string_view token : tokens) {
    const size_t mark = bytes.size();
    bool mapped = true;
    for (char32_t c : utf8_decode(token, "ByteLevel decoder")) {
      std::optional<uint8_t> byte = byte_level_byte(c);
      if (!byte) {
        mapped = false;
        break;
      }
      bytes.push_back(static_cast<char>(*byte));
    }
    if (!mapped) bytes.replace(mark, std::string::npos, token);
  }
  // from_utf8_lossy: each maximal prefix of a valid sequence that breaks off becomes one U+FFFD.
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string text;
  text.reserve(bytes.size());
  const auto* s = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  for (size_t i = 0; i < n;) {
    const uint8_t b = s[i];
    if (b < 0x80) {
      text.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    size_t need = 0;
    uint8_t low = 0x80, high = 0xBF;  // the allowed range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) low = 0xA0;
      if (b == 0xED) high = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) low = 0x90;
      if (b == 0xF4) high = 0x8F;
    }
    size_t j = i + 1;
    for (size_t k = 0; k < need && j < n; ++k, ++j) {
      const uint8_t lo = k == 0 ? low : 0x80, hi = k == 0 ? high : 0xBF;
      if (s[j] < lo || s[j] > hi) break;
    }
    if (need > 0 && j - i == need + 1) {
      text.append(bytes, i, j - i);
    } else {
      text.append(kReplacement);
    }
    i = j;
  }
  return text;
}

}  // namespace kiln
