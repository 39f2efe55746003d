// The tokenizer pipeline: added tokens, then BertNormalizer, BertPreTokenizer and WordPiece or
// ByteLevel and BPE, then truncation, template and padding (tokenizer_encoding.cpp); decoding
// and vocabulary lookups.
#include "kiln/io/tokenizer.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "kiln/io/tokenizer_byte_level.h"
#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

constexpr std::string_view kWhere = "tokenizer";

// HF's WordPiece decoder cleanup, applied to each token with its leading space.
void cleanup(std::string& token) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},     {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},   {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
  };
  for (const auto& [from, to] : kRules) {
    for (size_t at = token.find(from); at != std::string::npos;
         at = token.find(from, at + to.size())) {
      token.replace(at, from.size(), to);
    }
  }
}

}  // namespace

PostProcessor bert_post_processor(const std::string& cls, int32_t cls_id, const std::string& sep,
                                  int32_t sep_id) {
  PostProcessor p;
  p.single = {{-1, cls, 0}, {0, "", 0}, {-1, sep, 0}};
  p.pair = {{-1, cls, 0}, {0, "", 0}, {-1, sep, 0}, {1, "", 1}, {-1, sep, 1}};
  p.special_tokens = {{cls, {cls_id}, {cls}}, {sep, {sep_id}, {sep}}};
  return p;
}

PostProcessor roberta_post_processor(const std::string& cls, int32_t cls_id, const std::string& sep,
                                     int32_t sep_id) {
  PostProcessor p;
  p.single = {{-1, cls, 0}, {0, "", 0}, {-1, sep, 0}};
  p.pair = {{-1, cls, 0}, {0, "", 0}, {-1, sep, 0}, {-1, sep, 0}, {1, "", 0}, {-1, sep, 0}};
  p.special_tokens = {{cls, {cls_id}, {cls}}, {sep, {sep_id}, {sep}}};
  p.roberta = true;
  p.byte_level = ByteLevelOptions{true, true, true};  // RobertaProcessing::new's
  return p;
}

void set_add_prefix_space(TokenizerConfig& config, bool add_prefix_space) {
  if (config.model != TokenizerModel::bpe) return;
  config.byte_level.add_prefix_space = add_prefix_space;
  if (config.post_processor.roberta) {
    config.post_processor.byte_level->add_prefix_space = add_prefix_space;
  }
}

Tokenizer::Tokenizer(TokenizerConfig config) : config_(std::move(config)) {
  const std::string where = config_.source.empty() ? std::string(kWhere) : config_.source;
  if (config_.model == TokenizerModel::bpe) {
    unk_id_ = bpe_unk_id(config_.vocab, config_.bpe, where);
    bpe_merges_ = BpeMerges(config_.vocab, config_.bpe, where);
    bpe_spaces_.resize(static_cast<size_t>(config_.vocab.size()));
    for (int32_t id = 0; id < config_.vocab.size(); ++id) {
      bpe_spaces_[static_cast<size_t>(id)] =
          byte_level_token_spaces(utf8_decode(config_.vocab.token(id), where));
    }
  } else {
    unk_id_ = wordpiece_unk_id(config_.vocab, config_.wordpiece, where);
  }
  for (const AddedToken& token : config_.added_tokens) {
    check(token.id >= 0, where, "added token \"", token.content, "\" has the negative id ",
          token.id);
    check(!token.content.empty(), where, "added token ", token.id, " is empty");
    std::u32string pattern = utf8_decode(token.content, where);
    if (token.normalized) {
      NormalizedText normalized;
      bert_normalize(pattern, 0, pattern.size(), config_.normalizer, normalized);
      normalized_matcher_.add(std::move(normalized.chars), token.id, token.single_word,
                              token.lstrip, token.rstrip);
    } else {
      raw_matcher_.add(std::move(pattern), token.id, token.single_word, token.lstrip, token.rstrip);
    }
  }
  const PostProcessor& post = config_.post_processor;
  check(post.single.empty() == post.pair.empty(), where,
        "the post-processor needs both a single and a pair template");
  for (const auto* pieces : {&post.single, &post.pair}) {
    for (const TemplatePiece& piece : *pieces) {
      if (piece.sequence < 0) {
        try {
          post.special(piece.special);
        } catch (const Error&) {
          fail(where, "the post-processor template uses the undefined special token \"",
               piece.special, "\"");
        }
      } else {
        check(piece.sequence <= (pieces == &post.pair ? 1 : 0), where,
              "the post-processor template uses a second text where there is none");
      }
    }
  }
  for (const TemplateSpecialToken& special : post.special_tokens) {
    check(!special.ids.empty() && special.ids.size() == special.tokens.size(), where,
          "special token \"", special.name, "\" of the post-processor needs as many ids as tokens");
  }
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  for (const AddedToken& added : config_.added_tokens) {
    if (added.content == token) return added.id;
  }
  return config_.vocab.find(token);
}

std::string_view Tokenizer::id_to_token(int32_t id) const {
  for (const AddedToken& added : config_.added_tokens) {
    if (added.id == id) return added.content;
  }
  return config_.vocab.token(id);
}

int32_t Tokenizer::vocab_size() const {
  int32_t size = static_cast<int32_t>(config_.vocab.distinct());
  for (const AddedToken& added : config_.added_tokens) {
    if (!config_.vocab.find(added.content)) ++size;
  }
  return size;
}

int32_t Tokenizer::pad_id() const {
  if (config_.pad_id) return *config_.pad_id;
  check(!config_.special.pad.empty(), kWhere,
        "this tokenizer has no padding token (as GPT-2's) and padding needs one: give it one, e.g. "
        "its eos token, with Tokenizer::set_pad_token");
  auto id = token_to_id(config_.special.pad);
  check(id.has_value(), kWhere, "padding needs a padding token, and \"", config_.special.pad,
        "\" is not in the vocabulary");
  return *id;
}

void Tokenizer::add_wordpiece_words(const NormalizedText& normalized, size_t begin, size_t end,
                                    int32_t sequence, int32_t& word, Encoding& out) const {
  std::vector<Span> words;
  std::vector<Piece> pieces;
  bert_pre_tokenize(normalized, begin, end, words);
  for (Span w : words) {
    pieces.clear();
    wordpiece_tokenize(config_.vocab, config_.wordpiece, *unk_id_, normalized, w, pieces);
    for (const Piece& piece : pieces) {
      out.push(piece.id, sequence,
               {normalized.origin[piece.chars.begin], normalized.origin[piece.chars.end - 1] + 1},
               word, sequence, 0);
    }
    ++word;
  }
}

void Tokenizer::add_bpe_words(const NormalizedText& normalized, size_t begin, size_t end,
                              int32_t sequence, int32_t& word, Encoding& out) const {
  NormalizedText bytes;
  std::vector<Span> words;
  std::vector<Piece> pieces;
  byte_level_pre_tokenize(normalized, begin, end, config_.byte_level, bytes, words);
  for (Span w : words) {
    pieces.clear();
    bpe_tokenize(config_.vocab, config_.bpe, bpe_merges_, unk_id_, bytes, w, pieces);
    for (const Piece& piece : pieces) {
      out.push(piece.id, sequence,
               {bytes.origin[piece.chars.begin], bytes.origin[piece.chars.end - 1] + 1}, word,
               sequence, 0);
      out.spaces.push_back(bpe_spaces_[static_cast<size_t>(piece.id)]);
    }
    ++word;
  }
}

void Tokenizer::set_pad_token(const std::string& token) {
  std::optional<int32_t> id = token_to_id(token);
  check(id.has_value(), kWhere, "the padding token \"", token, "\" is not in the vocabulary");
  config_.special.pad = token;
  config_.pad_id = *id;
}

Encoding Tokenizer::encode_text(std::string_view text, int32_t sequence) const {
  const std::u32string original = utf8_decode(text, kWhere);
  const bool bpe = config_.model == TokenizerModel::bpe;
  Encoding out;
  int32_t word = 0;
  NormalizedText normalized;
  std::vector<AddedMatch> matches;

  // An added token; its string is the text it matched, whitespace it swallowed included.
  auto add_token = [&](int32_t id, CharRange range, std::u32string_view matched) {
    out.push(id, sequence, range, word++, sequence, 0);
    if (bpe) out.spaces.push_back(byte_level_token_spaces(matched));
  };
  auto add_words = [&](size_t begin, size_t end) {
    if (bpe) {
      add_bpe_words(normalized, begin, end, sequence, word, out);
    } else {
      add_wordpiece_words(normalized, begin, end, sequence, word, out);
    }
  };
  // A stretch of original text between raw added tokens: normalized, then searched for the
  // normalized added tokens, then split into words.
  auto add_segment = [&](size_t begin, size_t end) {
    normalized.clear();
    bert_normalize(original, begin, end, config_.normalizer, normalized);
    std::vector<AddedMatch> inner;
    if (!normalized_matcher_.empty()) {
      normalized_matcher_.find(normalized.chars, 0, normalized.chars.size(), inner);
    }
    size_t at = 0;
    for (const AddedMatch& m : inner) {
      add_words(at, m.begin);
      add_token(m.id, {normalized.origin[m.begin], normalized.origin[m.end - 1] + 1},
                std::u32string_view(normalized.chars).substr(m.begin, m.end - m.begin));
      at = m.end;
    }
    add_words(at, normalized.chars.size());
  };

  if (!raw_matcher_.empty()) raw_matcher_.find(original, 0, original.size(), matches);
  size_t at = 0;
  for (const AddedMatch& m : matches) {
    if (at < m.begin) add_segment(at, m.begin);
    add_token(m.id, {m.begin, m.end},
              std::u32string_view(original).substr(m.begin, m.end - m.begin));
    at = m.end;
  }
  if (at < original.size()) add_segment(at, original.size());
  return out;
}

size_t Tokenizer::max_length(const EncodeOptions& options) const {
  if (options.max_length) return *options.max_length;
  check(config_.model_max_length.has_value(), kWhere,
        "truncation or padding to max_length needs a max_length: none was given and the tokenizer "
        "has no model_max_length");
  return *config_.model_max_length;
}

Encoding Tokenizer::finish(std::vector<Encoding> texts, const EncodeOptions& options) const {
  if (options.truncation != Truncation::none) {
    const bool pair = texts.size() == 2;
    const size_t limit = max_length(options);
    // HF refuses a stride above max_length less a single text's special tokens up front
    // (tokenizers' with_truncation), whether or not this text needs truncating.
    const size_t single = config_.post_processor.added_tokens(false);
    check(limit < single || options.stride <= limit - single, kWhere, "stride ", options.stride,
          " is more than max_length ", limit, " less the ", single, " special tokens");
    const size_t added = options.add_special_tokens ? config_.post_processor.added_tokens(pair) : 0;
    // HF's unsigned subtraction wraps here and then truncates nothing; Kiln says so instead.
    check(limit >= added, kWhere, "max_length ", limit, " leaves no room for the ", added,
          " special tokens");
    truncate_encodings(texts[0], pair ? &texts[1] : nullptr, options.truncation, limit - added,
                       options.stride, options.truncation_side);
  }
  Encoding encoding =
      post_process(config_.post_processor, std::move(texts), options.add_special_tokens);
  if (options.padding != Padding::none) {
    std::vector<Encoding> batch;
    batch.push_back(std::move(encoding));
    pad_batch(batch, options);
    encoding = std::move(batch[0]);
  }
  return encoding;
}

void Tokenizer::pad_batch(std::vector<Encoding>& batch, const EncodeOptions& options) const {
  if (options.padding == Padding::none || batch.empty()) return;
  size_t length = 0;
  if (options.padding == Padding::max_length) {
    length = max_length(options);
  } else {
    for (const Encoding& e : batch) length = std::max(length, e.size());
  }
  const size_t multiple = options.pad_to_multiple_of;
  if (multiple > 0 && length % multiple > 0) length += multiple - length % multiple;
  const int32_t id = pad_id();
  for (Encoding& e : batch) pad_encoding(e, length, id, config_.pad_type_id, options.padding_side);
}

Encoding Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  std::vector<Encoding> texts;
  texts.push_back(encode_text(text, 0));
  return finish(std::move(texts), options);
}

Encoding Tokenizer::encode_pair(std::string_view text, std::string_view pair,
                                const EncodeOptions& options) const {
  std::vector<Encoding> texts;
  texts.push_back(encode_text(text, 0));
  texts.push_back(encode_text(pair, 1));
  return finish(std::move(texts), options);
}

std::vector<Encoding> Tokenizer::encode_batch(std::span<const std::string_view> texts,
                                              const EncodeOptions& options) const {
  EncodeOptions unpadded = options;
  unpadded.padding = Padding::none;
  std::vector<Encoding> batch;
  batch.reserve(texts.size());
  for (std::string_view text : texts) batch.push_back(encode(text, unpadded));
  pad_batch(batch, options);
  return batch;
}

std::vector<Encoding> Tokenizer::encode_pair_batch(std::span<const std::string_view> texts,
                                                   std::span<const std::string_view> pairs,
                                                   const EncodeOptions& options) const {
  check(texts.size() == pairs.size(), kWhere, "a batch of ", texts.size(), " texts with ",
        pairs.size(), " second texts");
  EncodeOptions unpadded = options;
  unpadded.padding = Padding::none;
  std::vector<Encoding> batch;
  batch.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    batch.push_back(encode_pair(texts[i], pairs[i], unpadded));
  pad_batch(batch, options);
  return batch;
}

Encoding Tokenizer::encode_words(std::span<const std::string> words,
                                 const EncodeOptions& options) const {
  Encoding text;
  for (size_t w = 0; w < words.size(); ++w) {
    // tokenizers' pre-tokenized input: the word's tokens all carry its index.
    Encoding word = encode_text(words[w], 0);
    for (size_t t = 0; t < word.size(); ++t) {
      text.push(word.ids[t], 0, word.offsets[t], static_cast<int32_t>(w), 0, 0);
    }
    text.spaces.insert(text.spaces.end(), word.spaces.begin(), word.spaces.end());
  }
  std::vector<Encoding> texts;
  texts.push_back(std::move(text));
  return finish(std::move(texts), options);
}

std::vector<std::string> Tokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> tokens;
  for (int32_t id : encode_text(text, 0).ids) tokens.emplace_back(id_to_token(id));
  return tokens;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::unordered_set<int32_t> special;
  if (skip_special_tokens) {
    for (const AddedToken& added : config_.added_tokens) {
      if (added.special) special.insert(added.id);
    }
  }
  std::vector<std::string_view> tokens;
  for (int32_t id : ids) {
    std::string_view piece = id_to_token(id);
    // Special tokens when asked, and ids without a token (HF drops those too); an empty string
    // is a token only where the vocabulary has it.
    const bool unknown = piece.empty() && config_.vocab.find(piece) != id;
    if (!special.contains(id) && !unknown) tokens.push_back(piece);
  }
  if (config_.model == TokenizerModel::bpe) {
    if (config_.byte_level_decoder) return byte_level_decode(tokens);
    std::string text;  // no decoder: HF joins the tokens with spaces
    for (size_t i = 0; i < tokens.size(); ++i) text.append(i > 0 ? " " : "").append(tokens[i]);
    return text;
  }
  const std::string& prefix = config_.wordpiece.continuing_subword_prefix;
  std::string text, token;
  bool first = true;
  for (std::string_view piece : tokens) {
    if (first) {
      token.assign(piece);
    } else if (piece.starts_with(prefix)) {
      token.assign(piece.substr(prefix.size()));
    } else {
      token.assign(" ").append(piece);
    }
    first = false;
    if (config_.decode_cleanup) cleanup(token);
    text += token;
  }
  return text;
}

}  // namespace kiln
