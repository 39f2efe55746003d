// WordPiece vocabulary (vocab.txt) and greedy longest-match-first word splitting.
#include "kiln/io/tokenizer_wordpiece.h"

#include <algorithm>
#include <utility>

#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

size_t code_points(std::string_view utf8) {
  return static_cast<size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// Rust's str::trim_end: trailing White_Space; `line` is valid UTF-8.
std::string_view trim_end(std::string_view line) {
  while (!line.empty()) {
    size_t start = line.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80) --start;
    std::u32string last = utf8_decode(line.substr(start), "vocab");
    if (last.size() != 1 || !unicode_is_white_space(last[0])) break;
    line.remove_suffix(line.size() - start);
  }
  return line;
}

}  // namespace

int32_t Vocab::add(std::string token) {
  const auto id = static_cast<int32_t>(tokens_.size());
  longest_ = std::max(longest_, code_points(token));
  ids_.insert_or_assign(token, id);
  tokens_.push_back(std::move(token));
  return id;
}

void Vocab::set(std::string token, int32_t id) {
  if (id >= size()) tokens_.resize(static_cast<size_t>(id) + 1);
  longest_ = std::max(longest_, code_points(token));
  ids_.insert_or_assign(token, id);
  tokens_[static_cast<size_t>(id)] = std::move(token);
}

std::optional<int32_t> Vocab::find(std::string_view token) const {
  auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::string_view Vocab::token(int32_t id) const {
  if (id < 0 || id >= size()) return {};
  return tokens_[static_cast<size_t>(id)];
}

Vocab vocab_parse(std::string_view text, std::string_view where) {
  Vocab vocab;
  size_t line_number = 1;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    // Validate here so that a bad byte is reported with its line, as the data files do.
    const std::string line_where = std::string(where) + ":" + std::to_string(line_number);
    if (size_t nul = line.find('\0'); nul != std::string_view::npos) {
      fail(line_where, "NUL byte at byte ", nul, " of the line (not a text file?)");
    }
    utf8_decode(line, line_where);  // "[where:line] invalid UTF-8 at byte N"
    vocab.add(std::string(trim_end(line)));
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
    ++line_number;
  }
  return vocab;
}

int32_t wordpiece_unk_id(const Vocab& vocab, const WordPieceOptions& options,
                         std::string_view where) {
  auto unk = vocab.find(options.unk_token);
  check(unk.has_value(), where, "the vocabulary has no unknown token \"", options.unk_token, "\" (",
        vocab.distinct(), " entries)");
  return *unk;
}

void wordpiece_tokenize(const Vocab& vocab, const WordPieceOptions& options, int32_t unk_id,
                        const NormalizedText& text, Span word, std::vector<Piece>& out) {
  const size_t length = word.end - word.begin;
  if (length > options.max_input_chars_per_word) {
    out.push_back({unk_id, word});
    return;
  }
  // UTF-8 of the word and the byte offset of each character, so that candidate pieces are
  // substrings.
  std::string utf8;
  std::vector<size_t> byte_at(length + 1);
  for (size_t i = 0; i < length; ++i) {
    byte_at[i] = utf8.size();
    utf8_append(text.chars[word.begin + i], utf8);
  }
  byte_at[length] = utf8.size();

  const size_t first = out.size();
  const std::string& prefix = options.continuing_subword_prefix;
  std::string candidate;
  size_t start = 0;
  while (start < length) {
    // Nothing longer than the longest vocabulary entry can match.
    size_t end = std::min(length, start + vocab.longest());
    std::optional<int32_t> id;
    for (; end > start; --end) {
      std::string_view piece(utf8.data() + byte_at[start], byte_at[end] - byte_at[start]);
      if (start == 0) {
        id = vocab.find(piece);
      } else {
        candidate.assign(prefix).append(piece);
        id = vocab.find(candidate);
      }
      if (id) break;
    }
    if (!id) {
      out.resize(first);
      out.push_back({unk_id, word});
      return;
    }
    out.push_back(
        {*id,
         {static_cast<uint32_t>(word.begin + start), static_cast<uint32_t>(word.begin + end)}});
    start = end;
  }
}

}  // namespace kiln
