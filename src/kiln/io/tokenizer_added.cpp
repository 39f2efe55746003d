// Added-token search: leftmost-longest matches plus HF's single_word / lstrip / rstrip rules.
#include "kiln/io/tokenizer_added.h"

#include <algorithm>

#include "kiln/io/tokenizer_unicode.h"

namespace kiln {

void AddedTokenMatcher::add(std::u32string pattern, int32_t id, bool single_word, bool lstrip,
                            bool rstrip) {
  if (pattern.empty()) return;  // an empty pattern never matches in HF's trie either
  auto& list = by_first_[pattern[0]];
  list.push_back({std::move(pattern), id, single_word, lstrip, rstrip});
  std::stable_sort(list.begin(), list.end(), [](const Pattern& a, const Pattern& b) {
    return a.text.size() > b.text.size();
  });
}

void AddedTokenMatcher::find(std::u32string_view text, size_t begin, size_t end,
                             std::vector<AddedMatch>& out) const {
  size_t previous_end = begin;  // where the last accepted match ended
  size_t i = begin;
  while (i < end) {
    auto it = by_first_.find(text[i]);
    const Pattern* found = nullptr;
    if (it != by_first_.end()) {
      for (const Pattern& pattern : it->second) {
        if (pattern.text.size() <= end - i &&
            text.compare(i, pattern.text.size(), pattern.text) == 0) {
          found = &pattern;
          break;
        }
      }
    }
    if (!found) {
      ++i;
      continue;
    }
    size_t start = i, stop = i + found->text.size();
    i = stop;  // a discarded match is consumed too, as by HF's match iterator
    if (found->single_word) {
      const bool word_before = start > begin && unicode_is_word_char(text[start - 1]);
      const bool word_after = stop < end && unicode_is_word_char(text[stop]);
      if (word_before || word_after) continue;
    }
    if (found->lstrip) {
      while (start > previous_end && unicode_is_white_space(text[start - 1])) --start;
    }
    if (found->rstrip) {
      while (stop < end && unicode_is_white_space(text[stop])) ++stop;
      i = stop;
    }
    out.push_back({start, stop, found->id});
    previous_end = stop;
  }
}

}  // namespace kiln
