// Truncation with overflowing windows, template post-processing and padding, following HF
// tokenizers' truncate_encodings, TemplateProcessing + Encoding::merge_with and Encoding::pad.
#include "kiln/io/tokenizer_encoding.h"

#include <algorithm>
#include <utility>

#include "kiln/io/tokenizer_byte_level.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

constexpr std::string_view kWhere = "tokenizer";

// Tokens [start, stop) of `e`, without overflowing windows.
Encoding slice(const Encoding& e, size_t start, size_t stop) {
  auto part = [&](const auto& v) {
    return std::decay_t<decltype(v)>(v.begin() + start, v.begin() + stop);
  };
  Encoding out;
  out.ids = part(e.ids);
  out.type_ids = part(e.type_ids);
  out.attention_mask = part(e.attention_mask);
  out.special_tokens_mask = part(e.special_tokens_mask);
  out.offsets = part(e.offsets);
  out.word_ids = part(e.word_ids);
  out.sequence_ids = part(e.sequence_ids);
  if (!e.spaces.empty()) out.spaces = part(e.spaces);
  return out;
}

// Appends the tokens of `tail` to `head` (their overflowing windows aside).
void concat(Encoding& head, const Encoding& tail) {
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(head.ids, tail.ids);
  append(head.type_ids, tail.type_ids);
  append(head.attention_mask, tail.attention_mask);
  append(head.special_tokens_mask, tail.special_tokens_mask);
  append(head.offsets, tail.offsets);
  append(head.word_ids, tail.word_ids);
  append(head.sequence_ids, tail.sequence_ids);
}

Encoding concatenated(const Encoding& head, const Encoding& tail) {
  Encoding out = slice(head, 0, head.size());
  concat(out, tail);
  return out;
}

// HF Encoding::merge_with: every window of `self` with `pair` and with each window of `pair`,
// then `self` with each window of `pair`; then `self` itself grows by `pair`.
void merge_with(Encoding& self, const Encoding& pair) {
  std::vector<Encoding> windows;
  for (const Encoding& own : self.overflowing) {
    windows.push_back(concatenated(own, pair));
    for (const Encoding& other : pair.overflowing) windows.push_back(concatenated(own, other));
  }
  for (const Encoding& other : pair.overflowing) windows.push_back(concatenated(self, other));
  concat(self, pair);
  self.overflowing = std::move(windows);
}

// HF Encoding::truncate: keeps max_len tokens on one side; with a stride, the rest becomes
// windows of max_len tokens overlapping by `stride`.
void truncate(Encoding& e, size_t max_len, size_t stride, Side side) {
  const size_t n = e.size();
  if (max_len >= n) return;
  if (max_len == 0) {
    Encoding whole = std::move(e);
    e = Encoding{};
    e.overflowing.push_back(std::move(whole));
    return;
  }
  check(stride < max_len, kWhere, "stride ", stride, " must be less than the ", max_len,
        " tokens a window holds (max_length less the special tokens)");
  const size_t step = max_len - stride;
  std::vector<std::pair<size_t, size_t>> parts;
  if (side == Side::right) {
    for (size_t start = 0; start < n; start += step) {
      size_t stop = std::min(start + max_len, n);
      parts.emplace_back(start, stop);
      if (stop == n) break;
    }
  } else {
    for (size_t last = n; last-- > 0;) {
      size_t stop = last + 1;
      size_t start = stop > max_len ? stop - max_len : 0;
      parts.emplace_back(start, stop);
      if (start == 0 || last < step) break;
      last -= step - 1;
    }
  }
  Encoding head = slice(e, parts[0].first, parts[0].second);
  for (size_t i = 1; i < parts.size(); ++i) {
    head.overflowing.push_back(slice(e, parts[i].first, parts[i].second));
  }
  e = std::move(head);
}

void fill_sequence(Encoding& e, int32_t sequence, std::optional<int32_t> type_id) {
  std::fill(e.sequence_ids.begin(), e.sequence_ids.end(), sequence);
  if (type_id) std::fill(e.type_ids.begin(), e.type_ids.end(), *type_id);
}

}  // namespace

void Encoding::push(int32_t id, int32_t type_id, CharRange offset, int32_t word, int32_t sequence,
                    int32_t special) {
  ids.push_back(id);
  type_ids.push_back(type_id);
  attention_mask.push_back(1);
  special_tokens_mask.push_back(special);
  offsets.push_back(offset);
  word_ids.push_back(word);
  sequence_ids.push_back(sequence);
}

size_t PostProcessor::added_tokens(bool is_pair) const {
  size_t count = 0;
  for (const TemplatePiece& piece : is_pair ? pair : single) {
    if (piece.sequence < 0) count += special(piece.special).ids.size();
  }
  return count;
}

const TemplateSpecialToken& PostProcessor::special(const std::string& name) const {
  for (const TemplateSpecialToken& token : special_tokens) {
    if (token.name == name) return token;
  }
  fail(kWhere, "the post-processor template uses the undefined special token \"", name, "\"");
}

void truncate_encodings(Encoding& first, Encoding* second, Truncation strategy, size_t max_length,
                        size_t stride, Side side) {
  if (strategy == Truncation::none) return;
  if (max_length == 0) {
    truncate(first, 0, stride, side);
    if (second) truncate(*second, 0, stride, side);
    return;
  }
  const size_t total = first.size() + (second ? second->size() : 0);
  if (total <= max_length) return;
  const size_t to_remove = total - max_length;
  if (strategy == Truncation::longest_first) {
    if (!second) {
      truncate(first, max_length, stride, side);
      return;
    }
    // Both texts keep half when both are long; otherwise the longer one gives way.
    size_t n1 = first.size(), n2 = second->size();
    const bool swap = n1 > n2;
    if (swap) std::swap(n1, n2);
    n2 = n1 > max_length ? n1 : std::max(n1, max_length - n1);
    if (n1 + n2 > max_length) {
      n1 = max_length / 2;
      n2 = n1 + max_length % 2;
    }
    if (swap) std::swap(n1, n2);
    truncate(first, n1, stride, side);
    truncate(*second, n2, stride, side);
    return;
  }
  check(strategy == Truncation::only_first || second != nullptr, kWhere,
        "truncation only_second needs a second text");
  Encoding& target = strategy == Truncation::only_first ? first : *second;
  check(target.size() > to_remove, kWhere, "truncation ",
        strategy == Truncation::only_first ? "only_first" : "only_second", ": the text has ",
        target.size(), " tokens, too few to remove the ", to_remove,
        " needed to respect max_length");
  truncate(target, target.size() - to_remove, stride, side);
}

Encoding post_process(const PostProcessor& processor, std::vector<Encoding> texts,
                      bool add_special_tokens) {
  // ByteLevel's trim_offsets on each text and each window (whose first token counts as first).
  auto trim = [&](Encoding& e) {
    if (processor.byte_level && processor.byte_level->trim_offsets)
      byte_level_trim_offsets(e, processor.byte_level->add_prefix_space);
    e.spaces.clear();
  };
  // Each text and its windows learn their sequence id; type ids default to it.
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto sequence = static_cast<int32_t>(i);
    trim(texts[i]);
    fill_sequence(texts[i], sequence, processor.roberta ? 0 : sequence);
    for (Encoding& window : texts[i].overflowing) {
      trim(window);
      fill_sequence(window, sequence, processor.roberta && add_special_tokens ? 0 : sequence);
    }
  }
  Encoding merged;
  if (processor.single.empty()) {
    for (const Encoding& text : texts) merge_with(merged, text);
    return merged;
  }
  for (const TemplatePiece& piece : texts.size() == 2 ? processor.pair : processor.single) {
    if (piece.sequence >= 0) {
      Encoding& text = texts.at(static_cast<size_t>(piece.sequence));
      // As HF: the template's type id reaches the text, not its windows.
      fill_sequence(text, piece.sequence, piece.type_id);
      merge_with(merged, text);
    } else if (add_special_tokens) {
      Encoding special;
      for (int32_t id : processor.special(piece.special).ids) {
        special.push(id, piece.type_id, {}, -1, -1, 1);
      }
      merge_with(merged, special);
    }
  }
  return merged;
}

void pad_encoding(Encoding& encoding, size_t length, int32_t pad_id, int32_t pad_type_id,
                  Side side) {
  for (Encoding& window : encoding.overflowing)
    pad_encoding(window, length, pad_id, pad_type_id, side);
  if (encoding.size() >= length) return;
  const size_t count = length - encoding.size();
  auto pad = [&](auto& v, auto value) {
    v.insert(side == Side::right ? v.end() : v.begin(), count, value);
  };
  pad(encoding.ids, pad_id);
  pad(encoding.type_ids, pad_type_id);
  pad(encoding.attention_mask, 0);
  pad(encoding.special_tokens_mask, 1);
  pad(encoding.offsets, CharRange{});
  pad(encoding.word_ids, -1);
  pad(encoding.sequence_ids, -1);
}

}  // namespace kiln
