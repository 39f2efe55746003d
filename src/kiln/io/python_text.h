// Python's str semantics where Kiln must reproduce a Python script's results to the digit (the
// SQuAD evaluation scripts): str.lower(), the whitespace of str.split(), and re's \w.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

// str.lower() of UTF-8 text (full mappings, U+0130 gives two code points; the final-sigma rule
// is not applied: Σ always becomes σ). Invalid UTF-8 is an Error naming `where`.
std::u32string python_lower(std::string_view text, std::string_view where);

// str.isspace(): what str.split() without arguments splits on (Unicode White_Space and the
// information separators U+001C..U+001F).
bool python_is_space(char32_t c);

// re's \w on str patterns: str.isalnum() (categories L* and N*) or '_'.
bool python_is_word_char(char32_t c);

}  // namespace kiln
