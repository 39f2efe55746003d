// UTF-8 coding and HF BertNormalizer/BertPreTokenizer character classes (utf8proc + probed tables).
#include "kiln/io/tokenizer_unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <array>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

bool in_ranges(std::span<const unicode_tables::CodeRange> table, char32_t c) {
  auto it = std::upper_bound(table.begin(), table.end(), c,
                             [](char32_t value, const auto& range) { return value < range.first; });
  return it != table.begin() && c <= std::prev(it)->last;
}

const unicode_tables::CodeMapping* find_mapping(std::span<const unicode_tables::CodeMapping> table,
                                                char32_t c) {
  auto it = std::lower_bound(table.begin(), table.end(), c,
                             [](const auto& entry, char32_t value) { return entry.from < value; });
  return it != table.end() && it->from == c ? &*it : nullptr;
}

void append_mapping(const unicode_tables::CodeMapping& mapping, std::u32string& out) {
  for (char32_t c : mapping.to) {
    if (c != 0) out.push_back(c);
  }
}

}  // namespace

std::u32string utf8_decode(std::string_view text, std::string_view where) {
  std::u32string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    if (bytes[i] < 0x80) {  // ASCII fast path
      out.push_back(bytes[i++]);
      continue;
    }
    utf8proc_int32_t c = 0;
    utf8proc_ssize_t n =
        utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(text.size() - i), &c);
    check(n > 0, where, "invalid UTF-8 at byte ", i);
    out.push_back(static_cast<char32_t>(c));
    i += static_cast<size_t>(n);
  }
  return out;
}

void utf8_append(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
    return;
  }
  utf8proc_uint8_t buffer[4];
  utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buffer);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
}

std::string utf8_encode(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) utf8_append(c, out);
  return out;
}

bool unicode_is_white_space(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool unicode_is_word_char(char32_t c) {
  if (c < 0x80)
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  if (c == 0x200C || c == 0x200D) return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

bool bert_is_whitespace(char32_t c) {
  // \v, \f and U+0085 are White_Space but also controls: clean_text drops them.
  return unicode_is_white_space(c) && c != 0x0B && c != 0x0C && c != 0x85;
}

bool bert_is_control(char32_t c) {
  if (c < 0x80) return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F;
  return in_ranges(unicode_tables::control, c);
}

bool bert_is_punctuation(char32_t c) {
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  return in_ranges(unicode_tables::punctuation, c);
}

bool byte_level_is_letter(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return in_ranges(unicode_tables::byte_level_letter, c);
}

bool byte_level_is_number(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(unicode_tables::byte_level_number, c);
}

bool bert_is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

void bert_append_stripped(char32_t c, std::u32string& out) {
  if (c < 0xC0) {  // nothing below U+00C0 decomposes or is a mark
    out.push_back(c);
    return;
  }
  if (const auto* mapping = find_mapping(unicode_tables::strip_accents, c)) {
    append_mapping(*mapping, out);
    return;
  }
  std::array<utf8proc_int32_t, 32> parts{};
  int boundclass = 0;
  utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), parts.data(),
                                               parts.size(), UTF8PROC_DECOMPOSE, &boundclass);
  for (utf8proc_ssize_t i = 0; i < n; ++i) {
    auto part = static_cast<char32_t>(parts[i]);
    if (!in_ranges(unicode_tables::nonspacing_mark, part)) out.push_back(part);
  }
}

void bert_append_lowercase(char32_t c, std::u32string& out) {
  if (c < 0x80) {
    out.push_back(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    return;
  }
  if (const auto* mapping = find_mapping(unicode_tables::lowercase, c)) {
    append_mapping(*mapping, out);
    return;
  }
  out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
}

}  // namespace kiln
