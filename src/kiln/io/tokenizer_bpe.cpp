// The BPE model: HF tokenizers' merge_word and Word::merge_all (bpe/model.rs, bpe/word.rs)
// without dropout.
#include "kiln/io/tokenizer_bpe.h"

#include <algorithm>
#include <queue>

#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

struct Symbol {
  int32_t id = 0;
  uint32_t length = 0;  // characters of the word
  int64_t prev = -1;    // neighbours among the symbols not yet merged away
  int64_t next = -1;
  bool merged_away = false;
};

// A merge waiting in the queue: symbol `pos` with its next neighbour into `id`.
struct Candidate {
  uint32_t rank = 0;
  size_t pos = 0;
  int32_t id = 0;
};

}  // namespace

BpeMerges::BpeMerges(const Vocab& vocab, const BpeOptions& options, std::string_view where) {
  const size_t prefix = options.continuing_subword_prefix.size();
  merges_.reserve(options.merges.size());
  for (size_t rank = 0; rank < options.merges.size(); ++rank) {
    const auto& [a, b] = options.merges[rank];
    auto id_of = [&](const std::string& token) {
      std::optional<int32_t> id = vocab.find(token);
      check(id.has_value(), where, "model.merges[", rank, "]: \"", token,
            "\" is not in the vocabulary");
      return *id;
    };
    // Checked in tokenizers' order: the left token, the right one, then the merged one. As HF,
    // the right token loses as many leading bytes as the continuing-subword prefix has.
    const int32_t left = id_of(a);
    const int32_t right = id_of(b);
    const int32_t merged = id_of(a + b.substr(std::min(prefix, b.size())));
    merges_[pair_key(left, right)] = {static_cast<uint32_t>(rank), merged};
  }
}

const BpeMerges::Merge* BpeMerges::find(int32_t left, int32_t right) const {
  auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

std::optional<int32_t> bpe_unk_id(const Vocab& vocab, const BpeOptions& options,
                                  std::string_view where) {
  if (options.unk_token.empty()) return std::nullopt;
  std::optional<int32_t> id = vocab.find(options.unk_token);
  check(id.has_value(), where, "the unknown token \"", options.unk_token,
        "\" (model.unk_token) is not in the vocabulary");
  return id;
}

void bpe_tokenize(const Vocab& vocab, const BpeOptions& options, const BpeMerges& merges,
                  std::optional<int32_t> unk_id, const NormalizedText& text, Span word,
                  std::vector<Piece>& out) {
  if (word.begin == word.end) return;
  const std::u32string_view chars(text.chars);
  if (options.ignore_merges) {
    if (auto id = vocab.find(utf8_encode(chars.substr(word.begin, word.end - word.begin)))) {
      out.push_back({*id, word});
      return;
    }
  }
  // One symbol per character (prefix and suffix added for the lookup), unknown ones as unk.
  std::vector<Symbol> symbols;
  std::optional<Symbol> unknown;
  std::string piece;
  for (uint32_t i = word.begin; i < word.end; ++i) {
    piece.clear();
    if (i > word.begin) piece += options.continuing_subword_prefix;
    utf8_append(chars[i], piece);
    if (i + 1 == word.end) piece += options.end_of_word_suffix;
    if (std::optional<int32_t> id = vocab.find(piece)) {
      if (unknown) symbols.push_back(*std::exchange(unknown, std::nullopt));
      symbols.push_back({*id, 1});
    } else if (unk_id) {
      if (unknown && options.fuse_unk) {
        ++unknown->length;
      } else {
        if (unknown) symbols.push_back(*unknown);
        unknown = Symbol{*unk_id, 1};
      }
    }
  }
  if (unknown) symbols.push_back(*unknown);

  const auto count = static_cast<int64_t>(symbols.size());
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  for (int64_t i = 0; i < count; ++i) {
    symbols[i].prev = i - 1;
    symbols[i].next = i + 1 < count ? i + 1 : -1;
    if (i + 1 < count) {
      if (const auto* m = merges.find(symbols[i].id, symbols[i + 1].id))
        queue.push({m->rank, static_cast<size_t>(i), m->id});
    }
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.merged_away || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    // A stale entry: one of the two symbols changed since it was queued.
    const auto* current = merges.find(left.id, right.id);
    if (!current || current->id != top.id) continue;
    left.id = top.id;
    left.length += right.length;
    left.next = right.next;
    right.merged_away = true;
    if (left.next >= 0) symbols[left.next].prev = static_cast<int64_t>(top.pos);
    if (left.prev >= 0) {
      if (const auto* m = merges.find(symbols[left.prev].id, left.id))
        queue.push({m->rank, static_cast<size_t>(left.prev), m->id});
    }
    if (left.next >= 0) {
      if (const auto* m = merges.find(left.id, symbols[left.next].id))
        queue.push({m->rank, top.pos, m->id});
    }
  }
  // Ranges follow the symbols' lengths from the word's start: as in HF, a dropped unknown
  // character (no unk token) shifts the tokens after it.
  uint32_t at = word.begin;
  for (const Symbol& symbol : symbols) {
    if (symbol.merged_away) continue;
    out.push_back({symbol.id, {at, at + symbol.length}});
    at += symbol.length;
  }
}

}  // namespace kiln
