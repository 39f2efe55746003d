// Finding added tokens (BERT's special tokens typed in a text) the way HF's AddedVocabulary
// does: leftmost-longest, with the single_word / lstrip / rstrip rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln {

struct AddedMatch {
  size_t begin = 0;  // [begin, end) in the searched text, whitespace swallowed included
  size_t end = 0;
  int32_t id = 0;
};

class AddedTokenMatcher {
 public:
  // `pattern` is the token's text as it is searched for (normalized when the token is).
  void add(std::u32string pattern, int32_t id, bool single_word, bool lstrip, bool rstrip);
  bool empty() const { return by_first_.empty(); }

  // Appends the matches in text[begin, end), which HF sees as one string, to `out`.
  void find(std::u32string_view text, size_t begin, size_t end, std::vector<AddedMatch>& out) const;

 private:
  struct Pattern {
    std::u32string text;
    int32_t id;
    bool single_word, lstrip, rstrip;
  };
  // Patterns by first character, longest first.
  std::unordered_map<char32_t, std::vector<Pattern>> by_first_;
};

}  // namespace kiln
