// The BPE model of HF tokenizers: a word's characters merged pair by pair, lowest merge rank
// first (leftmost on ties), as GPT-2's and RoBERTa's tokenizer.json have it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/io/tokenizer_normalizer.h"
#include "kiln/io/tokenizer_wordpiece.h"

namespace kiln {

struct BpeOptions {
  // The merges in rank order (tokenizer.json's "merges", either "a b" or ["a", "b"]).
  std::vector<std::pair<std::string, std::string>> merges;
  // Empty: none, and a character outside the vocabulary is dropped (as HF does).
  std::string unk_token;
  std::string continuing_subword_prefix;  // before every character but a word's first
  std::string end_of_word_suffix;         // after a word's last character
  bool fuse_unk = false;                  // consecutive unknown characters make one unk token
  bool ignore_merges = false;             // a word in the vocabulary is one token as it is
  bool operator==(const BpeOptions&) const = default;
};

// The merge table by token ids, built once from BpeOptions::merges.
class BpeMerges {
 public:
  struct Merge {
    uint32_t rank = 0;
    int32_t id = 0;  // the merged token
  };

  BpeMerges() = default;
  // Every token of a merge and its result must be in the vocabulary: an Error naming `where`
  // and model.merges[rank] otherwise. A repeated pair takes its later rank, as in HF.
  BpeMerges(const Vocab& vocab, const BpeOptions& options, std::string_view where);

  const Merge* find(int32_t left, int32_t right) const;

 private:
  std::unordered_map<uint64_t, Merge> merges_;
};

// The id of options.unk_token (none when it is empty); an Error naming `where` when the
// vocabulary lacks it.
std::optional<int32_t> bpe_unk_id(const Vocab& vocab, const BpeOptions& options,
                                  std::string_view where);

// Appends the tokens of the word text.chars[word] to `out`, each with its range of characters.
void bpe_tokenize(const Vocab& vocab, const BpeOptions& options, const BpeMerges& merges,
                  std::optional<int32_t> unk_id, const NormalizedText& text, Span word,
                  std::vector<Piece>& out);

}  // namespace kiln
