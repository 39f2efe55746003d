// Kiln's tokenizers with the results of Hugging Face's fast tokenizers: WordPiece as
// BertTokenizerFast, byte-level BPE as GPT2TokenizerFast / RobertaTokenizerFast; ids,
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
#include "kiln/io/tokenizer_bpe.h"
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

// The special token names of tokenizer_config.json / special_tokens_map.json; empty: none.
struct SpecialTokens {
  std::string unk = "[UNK]";
  std::string sep = "[SEP]";
  std::string pad = "[PAD]";
  std::string cls = "[CLS]";
  std::string mask = "[MASK]";
  std::string bos;  // GPT-2 and RoBERTa ("<|endoftext|>", "<s>")
  std::string eos;
  bool operator==(const SpecialTokens&) const = default;
};

// The model of tokenizer.json: WordPiece (BertNormalizer, BertPreTokenizer, WordPiece decoder)
// or BPE (ByteLevel pre-tokenizer and decoder, no normalizer).
enum class TokenizerModel { wordpiece, bpe };

// Everything a tokenizer is made of; the loaders in tokenizer_files.h fill it from files.
struct TokenizerConfig {
  std::string source;  // the file it came from, named in errors
  TokenizerModel model = TokenizerModel::wordpiece;
  Vocab vocab;
  WordPieceOptions wordpiece;
  NormalizerOptions normalizer;
  BpeOptions bpe;               // model bpe
  ByteLevelOptions byte_level;  // model bpe: the ByteLevel pre-tokenizer
  // Model bpe: the ByteLevel decoder; unset: no decoder (tokens joined by spaces, as HF).
  std::optional<ByteLevelOptions> byte_level_decoder = ByteLevelOptions{};
  // Matched in the text before the model; ids past the vocabulary extend it.
  std::vector<AddedToken> added_tokens;
  PostProcessor post_processor;
  SpecialTokens special;
  // tokenizer_config.json's tokenizer_class, written back; empty: BertTokenizer for WordPiece,
  // PreTrainedTokenizerFast (tokenizer.json as it is) for BPE.
  std::string tokenizer_class;
  std::optional<int32_t> pad_id;  // unset: the id of special.pad (if any)
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
// RobertaProcessing's template, <s> $A </s> (</s> $B </s>) with every type id 0, and HF's
// default trim_offsets and add_prefix_space (true) in PostProcessor::byte_level.
PostProcessor roberta_post_processor(const std::string& cls, int32_t cls_id, const std::string& sep,
                                     int32_t sep_id);
// A byte-level model's add_prefix_space, on the ByteLevel pre-tokenizer and on RobertaProcessing,
// as GPT2TokenizerFast and RobertaTokenizerFast apply the argument; nothing for WordPiece.
void set_add_prefix_space(TokenizerConfig& config, bool add_prefix_space);

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
  // Pre-split words, as is_split_into_words=True: each word is tokenized on its own (the
  // pre-tokenizer may still split it, "don't" -> don ' t), every piece with the word's index in
  // word_ids and offsets within the word; then truncation, special tokens and padding as
  // encode(). Byte-level models need add_prefix_space for a word to tokenize as it would in a
  // sentence, as transformers requires for words (run_ner.py loads their tokenizers so).
  Encoding encode_words(std::span<const std::string> words, const EncodeOptions& options) const;

  // The token strings of `text` without special tokens (HF's tokenize()).
  std::vector<std::string> tokenize(std::string_view text) const;
  // The decoder of the model: WordPiece's ("##" pieces glued, spaces before punctuation
  // cleaned up) or ByteLevel's (the bytes of the tokens as UTF-8).
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = true) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // Empty for an unknown id.
  std::string_view id_to_token(int32_t id) const;
  // Vocabulary and added tokens (HF's len(tokenizer)).
  int32_t vocab_size() const;
  // None for a BPE model without an unknown token (GPT-2's).
  std::optional<int32_t> unk_id() const { return unk_id_; }
  // Errors when the tokenizer has no padding token (GPT-2 has none: see set_pad_token).
  int32_t pad_id() const;
  // Whether it has one (pad_id() may still fail for a padding token not in the vocabulary).
  bool has_pad_token() const { return config_.pad_id || !config_.special.pad.empty(); }
  // Makes `token` (in the vocabulary or an added token) the padding token, as a transformers
  // user sets tokenizer.pad_token = tokenizer.eos_token for GPT-2. Errors for an unknown token.
  void set_pad_token(const std::string& token);
  // from_pretrained(add_prefix_space=...): see the free function above.
  void set_add_prefix_space(bool add_prefix_space) {
    kiln::set_add_prefix_space(config_, add_prefix_space);
  }

 private:
  // The model's tokens for one text, before truncation and special tokens.
  Encoding encode_text(std::string_view text, int32_t sequence) const;
  // The tokens of the words of normalized.chars[begin, end), appended to `out` from word `word`.
  void add_wordpiece_words(const NormalizedText& normalized, size_t begin, size_t end,
                           int32_t sequence, int32_t& word, Encoding& out) const;
  void add_bpe_words(const NormalizedText& normalized, size_t begin, size_t end, int32_t sequence,
                     int32_t& word, Encoding& out) const;
  Encoding finish(std::vector<Encoding> texts, const EncodeOptions& options) const;
  size_t max_length(const EncodeOptions& options) const;
  void pad_batch(std::vector<Encoding>& batch, const EncodeOptions& options) const;

  TokenizerConfig config_;
  std::optional<int32_t> unk_id_;
  BpeMerges bpe_merges_;                  // model bpe
  std::vector<TokenSpaces> bpe_spaces_;   // model bpe: the spaces of each vocabulary token
  AddedTokenMatcher raw_matcher_;         // added tokens with normalized = false
  AddedTokenMatcher normalized_matcher_;  // added tokens with normalized = true
};

}  // namespace kiln
