// Tokenizer output and the steps after the model: truncation (with overflowing windows), the
// post-processing template that adds special tokens, and padding — as HF tokenizers does them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

// Half-open range of characters (Unicode code points) of the original text, as
// return_offsets_mapping gives it; {0, 0} for special and padding tokens.
struct CharRange {
  size_t start = 0;
  size_t end = 0;
  bool operator==(const CharRange&) const = default;
};

// The spaces (byte-level "Ġ" or White_Space) a token's string starts and ends with: what the
// ByteLevel offset trimming leaves out of its offsets.
struct TokenSpaces {
  size_t leading = 0;
  size_t trailing = 0;
  bool operator==(const TokenSpaces&) const = default;
};

struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> type_ids;
  std::vector<int32_t> attention_mask;       // 1 for tokens, 0 for padding
  std::vector<int32_t> special_tokens_mask;  // 1 for template special tokens and padding
  std::vector<CharRange> offsets;
  std::vector<int32_t> word_ids;      // word index within its text; -1: special/padding
  std::vector<int32_t> sequence_ids;  // 0 (first text), 1 (second); -1: special/padding
  // Byte-level models only, from the model to the post-processor (which trims offsets with them
  // and clears them); empty otherwise.
  std::vector<TokenSpaces> spaces;
  // With truncation: the further windows of the texts (return_overflowing_tokens), HF's order.
  std::vector<Encoding> overflowing;

  size_t size() const { return ids.size(); }
  // Appends one token (no overflowing).
  void push(int32_t id, int32_t type_id, CharRange offset, int32_t word, int32_t sequence,
            int32_t special);
};

enum class Truncation { none, longest_first, only_first, only_second };
enum class Padding { none, longest, max_length };
enum class Side { right, left };

// The arguments of a transformers tokenizer call.
struct EncodeOptions {
  bool add_special_tokens = true;
  Truncation truncation = Truncation::none;
  Padding padding = Padding::none;
  // For truncation and Padding::max_length; unset: the tokenizer's model_max_length.
  std::optional<size_t> max_length;
  size_t stride = 0;  // tokens shared by consecutive overflowing windows
  size_t pad_to_multiple_of = 0;
  Side truncation_side = Side::right;
  Side padding_side = Side::right;

  bool operator==(const EncodeOptions&) const = default;
};

// One element of a post-processing template: a text (0 = $A, 1 = $B) or a special token.
struct TemplatePiece {
  int sequence = -1;    // 0 or 1 for a text; -1 for a special token
  std::string special;  // the special token's name in PostProcessor::special_tokens
  int32_t type_id = 0;
  bool operator==(const TemplatePiece&) const = default;
};

struct TemplateSpecialToken {
  std::string name;
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
  bool operator==(const TemplateSpecialToken&) const = default;
};

// The options of HF's ByteLevel pre-tokenizer, post-processor and decoder (one JSON shape).
struct ByteLevelOptions {
  bool add_prefix_space = false;  // pre-tokenizer: a space before each text part without one
  bool trim_offsets = true;       // post-processor: offsets leave out the tokens' spaces
  bool use_regex = true;          // pre-tokenizer: split with GPT-2's regex
  bool operator==(const ByteLevelOptions&) const = default;
};

// HF TemplateProcessing (BertProcessing is the template [CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1;
// RobertaProcessing <s>:0 $A:0 </s>:0 </s>:0 $B:0 </s>:0 with `roberta` set).
// An empty `single` template means no special tokens are added.
struct PostProcessor {
  std::vector<TemplatePiece> single;
  std::vector<TemplatePiece> pair;
  std::vector<TemplateSpecialToken> special_tokens;
  // RobertaProcessing and the ByteLevel post-processor: their trim_offsets, applied to each text
  // and window before the template, with their add_prefix_space (the first token keeps the
  // space that was added before it).
  std::optional<ByteLevelOptions> byte_level;
  // RobertaProcessing: every type id is 0 (windows too, when special tokens are added).
  bool roberta = false;

  // The number of special token ids the template adds.
  size_t added_tokens(bool is_pair) const;
  const TemplateSpecialToken& special(const std::string& name) const;
  bool operator==(const PostProcessor&) const = default;
};

// Truncates the model output of one or two texts to `max_length` tokens in all (special tokens
// already subtracted) with the strategy; stride windows go to `overflowing`. Errors as HF's.
void truncate_encodings(Encoding& first, Encoding* second, Truncation strategy, size_t max_length,
                        size_t stride, Side side);

// The template applied to one or two truncated texts: one Encoding with type ids, sequence ids
// and special tokens, its overflowing windows combined as HF combines them.
Encoding post_process(const PostProcessor& processor, std::vector<Encoding> texts,
                      bool add_special_tokens);

// Pads `encoding` and its overflowing windows to `length` (no-op when already that long).
void pad_encoding(Encoding& encoding, size_t length, int32_t pad_id, int32_t pad_type_id,
                  Side side);

}  // namespace kiln
