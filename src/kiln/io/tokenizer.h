// Kiln's WordPiece tokenizer with the results of Hugging Face's BertTokenizerFast: ids,
// token_type_ids, attention_mask, special tokens, pairs, truncation, padding and offsets.
// Files: tokenizer_files.h loads and saves vocab.txt / tokenizer_config.json / tokenizer.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/io/tokenizer_added.h"
#include "kiln/io/tokenizer_encoding.h"
#include "kiln/io/tokenizer_normalizer.h"
#include "kiln/io/tokenizer_wordpiece.h"

namespace kiln {

// A token matched in the raw text before the WordPiece model sees it (HF's added tokens;
// BERT's special tokens: "[SEP]" typed in a text becomes the [SEP] id).
struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool single_word = false;  // only where not inside a word
  bool lstrip = false;       // swallows whitespace on its left
  bool rstrip = false;       // swallows whitespace on its right
  bool normalized = false;   // matched in the normalized text instead of the raw one
  bool special = true;       // skipped by decode(skip_special_tokens)
  bool operator==(const AddedToken&) const = default;
};

// The special token names of tokenizer_config.json / special_tokens_map.json.
struct SpecialTokens {
  std::string unk = "[UNK]";
  std::string sep = "[SEP]";
  std::string pad = "[PAD]";
  std::string cls = "[CLS]";
  std::string mask = "[MASK]";
  bool operator==(const SpecialTokens&) const = default;
};

// Everything a tokenizer is made of; the loaders in tokenizer_files.h fill it from files.
struct TokenizerConfig {
  std::string source;  // the file it came from, named in errors
  Vocab vocab;
  WordPieceOptions wordpiece;
  NormalizerOptions normalizer;
  // Matched in the text before the model; ids past the vocabulary extend it.
  std::vector<AddedToken> added_tokens;
  PostProcessor post_processor;
  SpecialTokens special;
  std::optional<int32_t> pad_id;  // unset: the id of special.pad
  int32_t pad_type_id = 0;
  bool decode_cleanup = true;  // the WordPiece decoder's "cleanup"
  // transformers' model_max_length: what truncation and Padding::max_length use when a call
  // gives no max_length. Unset: no limit, and such a call is an Error.
  std::optional<size_t> model_max_length;
  EncodeOptions defaults;  // used by the overloads without options
};

// The template of HF's BertTokenizer: [CLS]:0 $A:0 [SEP]:0 ($B:1 [SEP]:1).
PostProcessor bert_post_processor(const std::string& cls, int32_t cls_id, const std::string& sep,
                                  int32_t sep_id);

class Tokenizer {
 public:
  // Checks the configuration (the unknown token in the vocabulary, template special tokens
  // defined, ids valid); errors name config.source.
  explicit Tokenizer(TokenizerConfig config);

  const TokenizerConfig& config() const { return config_; }

  // Invalid UTF-8 in a text is an Error naming the byte.
  Encoding encode(std::string_view text) const { return encode(text, config_.defaults); }
  Encoding encode(std::string_view text, const EncodeOptions& options) const;
  Encoding encode_pair(std::string_view text, std::string_view pair,
                       const EncodeOptions& options) const;
  // Padding::longest pads to the longest encoding of the batch.
  std::vector<Encoding> encode_batch(std::span<const std::string_view> texts,
                                     const EncodeOptions& options) const;
  std::vector<Encoding> encode_pair_batch(std::span<const std::string_view> texts,
                                          std::span<const std::string_view> pairs,
                                          const EncodeOptions& options) const;

  // The token strings of `text` without special tokens (HF's tokenize()).
  std::vector<std::string> tokenize(std::string_view text) const;
  // HF's WordPiece decoder: "##" pieces glued, spaces before punctuation cleaned up.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = true) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // Empty for an unknown id.
  std::string_view id_to_token(int32_t id) const;
  // Vocabulary and added tokens (HF's len(tokenizer)).
  int32_t vocab_size() const;
  int32_t unk_id() const { return unk_id_; }
  // Errors when the tokenizer has no padding token.
  int32_t pad_id() const;

 private:
  // The model's tokens for one text, before truncation and special tokens.
  Encoding encode_text(std::string_view text, int32_t sequence) const;
  Encoding finish(std::vector<Encoding> texts, const EncodeOptions& options) const;
  size_t max_length(const EncodeOptions& options) const;
  void pad_batch(std::vector<Encoding>& batch, const EncodeOptions& options) const;

  TokenizerConfig config_;
  int32_t unk_id_ = 0;
  AddedTokenMatcher raw_matcher_;         // added tokens with normalized = false
  AddedTokenMatcher normalized_matcher_;  // added tokens with normalized = true
};

}  // namespace kiln
