// Python str predicates and lower(), from utf8proc's categories and the tokenizer's lowercase map.
#include "kiln/io/python_text.h"

#include <utf8proc.h>

#include "kiln/io/tokenizer_unicode.h"

namespace kiln {

std::u32string python_lower(std::string_view text, std::string_view where) {
  std::u32string out;
  out.reserve(text.size());
  // Python's lower() and Rust's char::to_lowercase share Unicode's full lowercase mappings.
  for (char32_t c : utf8_decode(text, where)) bert_append_lowercase(c, out);
  return out;
}

bool python_is_space(char32_t c) {
  return unicode_is_white_space(c) || (c >= 0x1C && c <= 0x1F);
}

bool python_is_word_char(char32_t c) {
  if (c < 0x80) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

}  // namespace kiln
