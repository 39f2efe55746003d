// The WordPiece model: a vocabulary and greedy longest-match-first splitting of one word.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/io/tokenizer_normalizer.h"

namespace kiln {

// Token strings by id, and the lookup from string to id.
class Vocab {
 public:
  // Appends `token` as the next id. A token seen before now looks up to the new id (as HF's
  // WordPiece, where the later line of a vocab.txt wins); its earlier id keeps the string.
  int32_t add(std::string token);
  // Puts `token` at `id` (a tokenizer.json "vocab" object); ids in between stay empty.
  void set(std::string token, int32_t id);

  std::optional<int32_t> find(std::string_view token) const;
  // The token string of `id`; empty for an id out of range or never assigned.
  std::string_view token(int32_t id) const;
  // One past the largest id.
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  // The number of distinct token strings.
  size_t distinct() const { return ids_.size(); }
  // The longest token, in code points (bounds the greedy search).
  size_t longest() const { return longest_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
  size_t longest_ = 0;
};

// Parses a vocab.txt: one token per line, id = line index, trailing whitespace trimmed (as
// HF's WordPiece.read_file). `where` names the file in errors.
Vocab vocab_parse(std::string_view text, std::string_view where);

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
};

// A sub-word token: its id and its range of normalized characters.
struct Piece {
  int32_t id = 0;
  Span chars;
};

// The id of options.unk_token; an Error naming `where` when the vocabulary lacks it.
int32_t wordpiece_unk_id(const Vocab& vocab, const WordPieceOptions& options,
                         std::string_view where);

// Appends the pieces of the word text.chars[word] to `out`: greedy longest match, later pieces
// with the continuing-subword prefix; a word longer than max_input_chars_per_word or with a rest
// that matches nothing is one `unk_id` token.
void wordpiece_tokenize(const Vocab& vocab, const WordPieceOptions& options, int32_t unk_id,
                        const NormalizedText& text, Span word, std::vector<Piece>& out);

}  // namespace kiln
