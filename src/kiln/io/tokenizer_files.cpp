// Reading tokenizers from vocab.txt + tokenizer_config.json or tokenizer.json, and the folder
// loader. Writing lives in tokenizer_files_write.cpp.
#include "kiln/io/tokenizer_files.h"

#include <filesystem>
#include <limits>

#include "kiln/io/json_util.h"
#include "kiln/io/mapped_file.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

// Typed reads with errors naming the file and the key path ("model.vocab").
class Reader {
 public:
  explicit Reader(std::string_view where) : where_(where) {}

  [[noreturn]] void bad(const std::string& path, std::string_view what) const {
    fail(where_, path.empty() ? "the top level" : path, ": ", what);
  }
  const Json& object(const Json& value, const std::string& path) const {
    if (!value.is_object()) bad(path, "expected an object, got " + type(value));
    return value;
  }
  const Json* find(const Json& parent, const std::string& path, const char* key) const {
    auto it = object(parent, path).find(key);
    return it == parent.end() ? nullptr : &*it;
  }
  const Json& need(const Json& parent, const std::string& path, const char* key) const {
    const Json* value = find(parent, path, key);
    if (!value) bad(join(path, key), "missing");
    return *value;
  }
  bool boolean(const Json& value, const std::string& path) const {
    if (!value.is_boolean()) bad(path, "expected true or false, got " + type(value));
    return value.get<bool>();
  }
  int64_t integer(const Json& value, const std::string& path, int64_t min, int64_t max) const {
    if (!value.is_number_integer()) bad(path, "expected an integer, got " + type(value));
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max)) {
      bad(path, "out of range");
    }
    auto n = value.get<int64_t>();
    if (n < min || n > max) bad(path, "out of range: " + std::to_string(n));
    return n;
  }
  std::string string(const Json& value, const std::string& path) const {
    if (!value.is_string()) bad(path, "expected a string, got " + type(value));
    return value.get<std::string>();
  }
  // transformers writes special tokens as "[CLS]" or as {"content": "[CLS]", ...}.
  std::string token(const Json& value, const std::string& path) const {
    if (value.is_object()) return string(need(value, path, "content"), join(path, "content"));
    return string(value, path);
  }
  // Optional members: absent leaves `out` unchanged.
  void get(const Json& parent, const std::string& path, const char* key, bool& out) const {
    if (const Json* v = find(parent, path, key)) out = boolean(*v, join(path, key));
  }
  void get(const Json& parent, const std::string& path, const char* key, std::string& out) const {
    if (const Json* v = find(parent, path, key)) out = string(*v, join(path, key));
  }
  void get(const Json& parent, const std::string& path, const char* key, size_t& out) const {
    if (const Json* v = find(parent, path, key)) {
      out =
          static_cast<size_t>(integer(*v, join(path, key), 0, std::numeric_limits<int32_t>::max()));
    }
  }
  Side side(const Json& value, const std::string& path) const {
    std::string text = string(value, path);
    if (text == "right" || text == "Right") return Side::right;
    if (text == "left" || text == "Left") return Side::left;
    bad(path, "expected \"right\" or \"left\", got \"" + text + "\"");
  }
  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

 private:
  static std::string type(const Json& value) { return value.type_name(); }
  std::string_view where_;
};

std::string read_text(const std::string& path) {
  MappedFile file(path);
  auto bytes = file.bytes();
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The added tokens of a vocab.txt tokenizer: the special tokens (normalized = false), at their
// vocabulary id or, when missing, at new ids after it.
void add_special(TokenizerConfig& config, const std::string& content) {
  if (content.empty()) return;
  for (const AddedToken& added : config.added_tokens) {
    if (added.content == content) return;
  }
  int32_t id = config.vocab.size();
  if (auto found = config.vocab.find(content)) {
    id = *found;
  } else {
    for (const AddedToken& added : config.added_tokens) id = std::max(id, added.id + 1);
  }
  config.added_tokens.push_back({content, id, false, false, false, false, true});
}

AddedToken added_token(const Reader& r, const Json& value, const std::string& path) {
  AddedToken token;
  token.content = r.string(r.need(value, path, "content"), Reader::join(path, "content"));
  r.get(value, path, "single_word", token.single_word);
  r.get(value, path, "lstrip", token.lstrip);
  r.get(value, path, "rstrip", token.rstrip);
  r.get(value, path, "normalized", token.normalized);
  r.get(value, path, "special", token.special);
  return token;
}

// tokenizer_config.json: the transformers-level settings. do_lower_case, strip_accents and
// tokenize_chinese_chars override tokenizer.json's normalizer, as they do in transformers.
void apply_tokenizer_config(TokenizerConfig& config, std::string_view text,
                            std::string_view where) {
  Reader r(where);
  const Json json = json_parse(text, where);
  r.object(json, "");
  if (config.model == TokenizerModel::wordpiece) {
    if (const Json* v = r.find(json, "", "do_lower_case"))
      config.normalizer.lowercase = r.boolean(*v, "do_lower_case");
    if (const Json* v = r.find(json, "", "strip_accents")) {
      config.normalizer.strip_accents =
          v->is_null() ? std::nullopt : std::optional(r.boolean(*v, "strip_accents"));
    }
    r.get(json, "", "tokenize_chinese_chars", config.normalizer.handle_chinese_chars);
  } else {
    // GPT2TokenizerFast and RobertaTokenizerFast set these on the ByteLevel pre-tokenizer and
    // RobertaProcessing.
    if (const Json* v = r.find(json, "", "add_prefix_space")) {
      set_add_prefix_space(config, r.boolean(*v, "add_prefix_space"));
    }
    if (const Json* v = r.find(json, "", "trim_offsets"); v && config.post_processor.roberta)
      config.post_processor.byte_level->trim_offsets = r.boolean(*v, "trim_offsets");
  }
  struct Name {
    const char* key;
    std::string* out;
  };
  for (Name name :
       {Name{"unk_token", &config.special.unk}, Name{"sep_token", &config.special.sep},
        Name{"pad_token", &config.special.pad}, Name{"cls_token", &config.special.cls},
        Name{"mask_token", &config.special.mask}, Name{"bos_token", &config.special.bos},
        Name{"eos_token", &config.special.eos}}) {
    if (const Json* v = r.find(json, "", name.key))
      *name.out = v->is_null() ? "" : r.token(*v, name.key);
  }
  r.get(json, "", "tokenizer_class", config.tokenizer_class);
  if (const Json* v = r.find(json, "", "model_max_length")) {
    if (!v->is_number() || v->get<double>() < 0)
      r.bad("model_max_length", "expected a non-negative number");
    // transformers writes 1e30 for "no limit"; any length beyond int32 means that in practice.
    const double length = v->get<double>();
    config.model_max_length = length > std::numeric_limits<int32_t>::max()
                                  ? std::nullopt
                                  : std::optional(static_cast<size_t>(length));
  }
  if (const Json* v = r.find(json, "", "padding_side"))
    config.defaults.padding_side = r.side(*v, "padding_side");
  if (const Json* v = r.find(json, "", "truncation_side"))
    config.defaults.truncation_side = r.side(*v, "truncation_side");
  if (const Json* v = r.find(json, "", "added_tokens_decoder")) {
    for (const auto& [key, value] : r.object(*v, "added_tokens_decoder").items()) {
      const std::string path = "added_tokens_decoder." + key;
      AddedToken token = added_token(r, r.object(value, path), path);
      try {
        size_t used = 0;
        token.id = std::stoi(key, &used);
        if (used != key.size() || token.id < 0) throw std::invalid_argument(key);
      } catch (const std::exception&) {
        r.bad(path, "the key must be a token id");
      }
      std::erase_if(config.added_tokens,
                    [&](const AddedToken& t) { return t.content == token.content; });
      config.added_tokens.push_back(std::move(token));
    }
  }
}

int32_t special_id(const TokenizerConfig& config, const std::string& token,
                   std::string_view where) {
  for (const AddedToken& added : config.added_tokens) {
    if (added.content == token) return added.id;
  }
  auto id = config.vocab.find(token);
  check(id.has_value(), where, "special token \"", token, "\" is not in the vocabulary");
  return *id;
}

NormalizerOptions parse_normalizer(const Reader& r, const Json& value) {
  NormalizerOptions options{false, false, false, false};  // null: the text as it is
  if (value.is_null()) return options;
  const std::string type = r.string(r.need(value, "normalizer", "type"), "normalizer.type");
  if (type != "BertNormalizer")
    r.bad("normalizer.type", "unsupported \"" + type + "\" (Kiln reads BertNormalizer)");
  options = NormalizerOptions{};
  r.get(value, "normalizer", "clean_text", options.clean_text);
  r.get(value, "normalizer", "handle_chinese_chars", options.handle_chinese_chars);
  r.get(value, "normalizer", "lowercase", options.lowercase);
  if (const Json* v = r.find(value, "normalizer", "strip_accents"); v && !v->is_null()) {
    options.strip_accents = r.boolean(*v, "normalizer.strip_accents");
  }
  return options;
}

// A ByteLevel pre-tokenizer, post-processor or decoder (HF's defaults for absent flags).
ByteLevelOptions parse_byte_level(const Reader& r, const Json& value, const std::string& path) {
  ByteLevelOptions options;
  r.get(value, path, "add_prefix_space", options.add_prefix_space);
  r.get(value, path, "trim_offsets", options.trim_offsets);
  r.get(value, path, "use_regex", options.use_regex);
  return options;
}

// A pipeline part that must be {"type": "ByteLevel", ...} for a BPE model.
ByteLevelOptions byte_level_part(const Reader& r, const Json& json, const char* key) {
  const Json* value = r.find(json, "", key);
  if (!value || value->is_null()) r.bad(key, "missing: Kiln's BPE needs the ByteLevel one");
  const std::string path = key;
  const std::string type = r.string(r.need(*value, path, "type"), path + ".type");
  if (type != "ByteLevel")
    r.bad(path + ".type", "unsupported \"" + type + "\" with model BPE (Kiln reads ByteLevel)");
  return parse_byte_level(r, *value, path);
}

std::vector<TemplatePiece> parse_template(const Reader& r, const Json& value,
                                          const std::string& path) {
  if (!value.is_array()) r.bad(path, "expected an array of template pieces");
  std::vector<TemplatePiece> pieces;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const Json& item = r.object(value[i], at);
    TemplatePiece piece;
    if (const Json* seq = r.find(item, at, "Sequence")) {
      const std::string id = r.string(r.need(*seq, at + ".Sequence", "id"), at + ".Sequence.id");
      if (id != "A" && id != "B") r.bad(at + ".Sequence.id", "expected \"A\" or \"B\"");
      piece.sequence = id == "A" ? 0 : 1;
      piece.type_id = static_cast<int32_t>(r.integer(r.need(*seq, at + ".Sequence", "type_id"),
                                                     at + ".Sequence.type_id", 0, 1 << 20));
    } else if (const Json* special = r.find(item, at, "SpecialToken")) {
      piece.special =
          r.string(r.need(*special, at + ".SpecialToken", "id"), at + ".SpecialToken.id");
      piece.type_id =
          static_cast<int32_t>(r.integer(r.need(*special, at + ".SpecialToken", "type_id"),
                                         at + ".SpecialToken.type_id", 0, 1 << 20));
    } else {
      r.bad(at, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

PostProcessor parse_post_processor(const Reader& r, const Json& value) {
  if (value.is_null()) return {};
  const std::string path = "post_processor";
  const std::string type = r.string(r.need(value, path, "type"), path + ".type");
  auto name_and_id = [&](const char* key) {
    const Json& pair = r.need(value, path, key);
    const std::string at = Reader::join(path, key);
    if (!pair.is_array() || pair.size() != 2) r.bad(at, "expected [token, id]");
    return std::pair(r.string(pair[0], at + "[0]"),
                     static_cast<int32_t>(
                         r.integer(pair[1], at + "[1]", 0, std::numeric_limits<int32_t>::max())));
  };
  if (type == "BertProcessing") {
    auto [cls, cls_id] = name_and_id("cls");
    auto [sep, sep_id] = name_and_id("sep");
    return bert_post_processor(cls, cls_id, sep, sep_id);
  }
  if (type == "RobertaProcessing") {
    auto [cls, cls_id] = name_and_id("cls");
    auto [sep, sep_id] = name_and_id("sep");
    PostProcessor processor = roberta_post_processor(cls, cls_id, sep, sep_id);
    r.get(value, path, "trim_offsets", processor.byte_level->trim_offsets);
    r.get(value, path, "add_prefix_space", processor.byte_level->add_prefix_space);
    return processor;
  }
  if (type == "ByteLevel") {
    PostProcessor processor;
    processor.byte_level = parse_byte_level(r, value, path);
    return processor;
  }
  if (type != "TemplateProcessing") {
    r.bad(path + ".type", "unsupported \"" + type +
                              "\" (Kiln reads TemplateProcessing, BertProcessing, "
                              "RobertaProcessing and ByteLevel)");
  }
  PostProcessor processor;
  processor.single = parse_template(r, r.need(value, path, "single"), path + ".single");
  processor.pair = parse_template(r, r.need(value, path, "pair"), path + ".pair");
  const Json& specials = r.object(r.need(value, path, "special_tokens"), path + ".special_tokens");
  for (const auto& [name, entry] : specials.items()) {
    const std::string at = path + ".special_tokens." + name;
    TemplateSpecialToken special{name, {}, {}};
    const Json& ids = r.need(entry, at, "ids");
    const Json& tokens = r.need(entry, at, "tokens");
    if (!ids.is_array() || !tokens.is_array()) r.bad(at, "expected arrays \"ids\" and \"tokens\"");
    for (const Json& id : ids)
      special.ids.push_back(
          static_cast<int32_t>(r.integer(id, at + ".ids", 0, std::numeric_limits<int32_t>::max())));
    for (const Json& token : tokens) special.tokens.push_back(r.string(token, at + ".tokens"));
    processor.special_tokens.push_back(std::move(special));
  }
  return processor;
}

void parse_truncation_padding(const Reader& r, const Json& json, TokenizerConfig& config) {
  if (const Json* t = r.find(json, "", "truncation"); t && !t->is_null()) {
    const std::string strategy =
        r.string(r.need(*t, "truncation", "strategy"), "truncation.strategy");
    if (strategy == "LongestFirst") {
      config.defaults.truncation = Truncation::longest_first;
    } else if (strategy == "OnlyFirst") {
      config.defaults.truncation = Truncation::only_first;
    } else if (strategy == "OnlySecond") {
      config.defaults.truncation = Truncation::only_second;
    } else {
      r.bad("truncation.strategy", "unknown \"" + strategy + "\"");
    }
    size_t max_length = 0;
    r.get(*t, "truncation", "max_length", max_length);
    config.defaults.max_length = max_length;
    r.get(*t, "truncation", "stride", config.defaults.stride);
    if (const Json* d = r.find(*t, "truncation", "direction"))
      config.defaults.truncation_side = r.side(*d, "truncation.direction");
  }
  if (const Json* p = r.find(json, "", "padding"); p && !p->is_null()) {
    const Json& strategy = r.need(*p, "padding", "strategy");
    if (strategy.is_string() && strategy.get<std::string>() == "BatchLongest") {
      config.defaults.padding = Padding::longest;
    } else if (strategy.is_object() && strategy.contains("Fixed")) {
      config.defaults.padding = Padding::max_length;
      size_t fixed = 0;
      r.get(strategy, "padding.strategy", "Fixed", fixed);
      // EncodeOptions has transformers' one max_length for truncation and padding.
      if (config.defaults.max_length && *config.defaults.max_length != fixed) {
        r.bad("padding.strategy.Fixed", "differs from truncation.max_length " +
                                            std::to_string(*config.defaults.max_length) +
                                            " (Kiln has one max_length for both)");
      }
      config.defaults.max_length = fixed;
    } else {
      r.bad("padding.strategy", "expected \"BatchLongest\" or {\"Fixed\": n}");
    }
    if (const Json* d = r.find(*p, "padding", "direction"))
      config.defaults.padding_side = r.side(*d, "padding.direction");
    if (const Json* m = r.find(*p, "padding", "pad_to_multiple_of"); m && !m->is_null()) {
      r.get(*p, "padding", "pad_to_multiple_of", config.defaults.pad_to_multiple_of);
    }
    if (const Json* id = r.find(*p, "padding", "pad_id")) {
      config.pad_id = static_cast<int32_t>(
          r.integer(*id, "padding.pad_id", 0, std::numeric_limits<int32_t>::max()));
    }
    if (const Json* id = r.find(*p, "padding", "pad_type_id")) {
      config.pad_type_id = static_cast<int32_t>(
          r.integer(*id, "padding.pad_type_id", 0, std::numeric_limits<int32_t>::max()));
    }
    r.get(*p, "padding", "pad_token", config.special.pad);
  }
}

// The vocabulary of model.vocab. HF numbers the tokens 0..n-1 (it calls holes a corrupted
// vocabulary); so does Kiln, which also keeps a hostile file from sizing the id table.
void parse_vocab(const Reader& r, const Json& model, Vocab& out) {
  const Json& vocab = r.object(r.need(model, "model", "vocab"), "model.vocab");
  const auto entries = static_cast<int64_t>(vocab.size());
  for (const auto& [token, id] : vocab.items()) {
    const auto n = static_cast<int32_t>(
        r.integer(id, "model.vocab." + token, 0, std::numeric_limits<int32_t>::max()));
    if (n >= entries || !out.token(n).empty()) {
      r.bad("model.vocab." + token, "id " + std::to_string(n) + " is not one of 0.." +
                                        std::to_string(entries - 1) + " used once");
    }
    out.set(token, n);
  }
}

// WordPiece with BertNormalizer, BertPreTokenizer and the WordPiece decoder.
void parse_wordpiece(const Reader& r, const Json& json, const Json& model,
                     TokenizerConfig& config) {
  r.get(model, "model", "unk_token", config.wordpiece.unk_token);
  r.get(model, "model", "continuing_subword_prefix", config.wordpiece.continuing_subword_prefix);
  r.get(model, "model", "max_input_chars_per_word", config.wordpiece.max_input_chars_per_word);
  config.special.unk = config.wordpiece.unk_token;
  parse_vocab(r, model, config.vocab);
  config.normalizer =
      parse_normalizer(r, r.find(json, "", "normalizer") ? json["normalizer"] : Json());
  const Json* pre = r.find(json, "", "pre_tokenizer");
  if (!pre || pre->is_null() || !pre->is_object() || pre->value("type", "") != "BertPreTokenizer") {
    r.bad("pre_tokenizer", "Kiln reads the BertPreTokenizer only");
  }
  if (const Json* decoder = r.find(json, "", "decoder"); decoder && !decoder->is_null()) {
    const std::string type = r.string(r.need(*decoder, "decoder", "type"), "decoder.type");
    if (type != "WordPiece")
      r.bad("decoder.type", "unsupported \"" + type + "\" (Kiln reads WordPiece)");
    r.get(*decoder, "decoder", "cleanup", config.decode_cleanup);
  }
}

// BPE with the ByteLevel pre-tokenizer and decoder and no normalizer (GPT-2, RoBERTa).
void parse_bpe(const Reader& r, const Json& json, const Json& model, TokenizerConfig& config) {
  config.model = TokenizerModel::bpe;
  BpeOptions& bpe = config.bpe;
  for (auto [key, out] : {std::pair{"unk_token", &bpe.unk_token},
                          std::pair{"continuing_subword_prefix", &bpe.continuing_subword_prefix},
                          std::pair{"end_of_word_suffix", &bpe.end_of_word_suffix}}) {
    if (const Json* v = r.find(model, "model", key); v && !v->is_null())
      *out = r.string(*v, Reader::join("model", key));
  }
  r.get(model, "model", "fuse_unk", bpe.fuse_unk);
  r.get(model, "model", "ignore_merges", bpe.ignore_merges);
  bool byte_fallback = false;
  r.get(model, "model", "byte_fallback", byte_fallback);
  if (byte_fallback) r.bad("model.byte_fallback", "unsupported (Kiln's BPE has no byte fallback)");
  if (const Json* v = r.find(model, "model", "dropout");
      v && !v->is_null() && !(v->is_number() && v->get<double>() == 0)) {
    r.bad("model.dropout", "unsupported (Kiln's BPE has no dropout)");
  }
  parse_vocab(r, model, config.vocab);
  const Json& merges = r.need(model, "model", "merges");
  if (!merges.is_array()) r.bad("model.merges", "expected an array");
  for (size_t i = 0; i < merges.size(); ++i) {
    const Json& merge = merges[i];
    const std::string path = "model.merges[" + std::to_string(i) + "]";
    if (merge.is_string()) {  // the older form, "a b"
      const std::string text = merge.get<std::string>();
      const size_t space = text.find(' ');
      if (space == std::string::npos) r.bad(path, "expected two tokens separated by a space");
      bpe.merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (merge.is_array() && merge.size() == 2) {
      bpe.merges.emplace_back(r.string(merge[0], path + "[0]"), r.string(merge[1], path + "[1]"));
    } else {
      r.bad(path, "expected \"a b\" or [\"a\", \"b\"]");
    }
  }
  if (const Json* n = r.find(json, "", "normalizer"); n && !n->is_null()) {
    r.bad("normalizer", "unsupported with model BPE (Kiln reads none)");
  }
  config.normalizer = NormalizerOptions{false, false, false, false};
  config.byte_level = byte_level_part(r, json, "pre_tokenizer");
  config.byte_level_decoder = std::nullopt;
  if (const Json* decoder = r.find(json, "", "decoder"); decoder && !decoder->is_null())
    config.byte_level_decoder = byte_level_part(r, json, "decoder");
  // No BERT names: the special tokens are the model's unknown token and tokenizer_config.json's.
  config.special = SpecialTokens{bpe.unk_token, "", "", "", "", "", ""};
}

}  // namespace

Tokenizer tokenizer_vocab_parse(std::string_view vocab_text, std::string_view vocab_where,
                                std::string_view config_json, std::string_view config_where) {
  TokenizerConfig config;
  config.source = std::string(vocab_where);
  config.vocab = vocab_parse(vocab_text, vocab_where);
  if (!config_json.empty()) apply_tokenizer_config(config, config_json, config_where);
  config.wordpiece.unk_token = config.special.unk;
  // transformers registers the special tokens as added tokens, in this order.
  for (const std::string* token : {&config.special.unk, &config.special.sep, &config.special.pad,
                                   &config.special.cls, &config.special.mask}) {
    add_special(config, *token);
  }
  std::sort(config.added_tokens.begin(), config.added_tokens.end(),
            [](const AddedToken& a, const AddedToken& b) { return a.id < b.id; });
  const std::string where =
      config_json.empty() ? std::string(vocab_where) : std::string(config_where);
  config.post_processor =
      bert_post_processor(config.special.cls, special_id(config, config.special.cls, where),
                          config.special.sep, special_id(config, config.special.sep, where));
  return Tokenizer(std::move(config));
}

Tokenizer tokenizer_json_parse(std::string_view json_text, std::string_view where,
                               std::string_view config_json, std::string_view config_where) {
  Reader r(where);
  const Json json = json_parse(json_text, where);
  r.object(json, "");
  TokenizerConfig config;
  config.source = std::string(where);

  const Json& model = r.need(json, "", "model");
  // Files that predate the "type" key (GPT-2's) are told apart by their merges.
  const std::string model_type = r.find(model, "model", "type")
                                     ? r.string(model["type"], "model.type")
                                     : (r.find(model, "model", "merges") ? "BPE" : "WordPiece");
  if (model_type == "WordPiece") {
    parse_wordpiece(r, json, model, config);
  } else if (model_type == "BPE") {
    parse_bpe(r, json, model, config);
  } else {
    r.bad("model.type", "unsupported \"" + model_type + "\" (Kiln reads WordPiece and BPE)");
  }
  if (const Json* post = r.find(json, "", "post_processor"))
    config.post_processor = parse_post_processor(r, *post);
  if (config.model == TokenizerModel::wordpiece && config.post_processor.byte_level)
    r.bad("post_processor.type", "a byte-level post-processor needs model BPE");
  if (const Json* added = r.find(json, "", "added_tokens")) {
    if (!added->is_array()) r.bad("added_tokens", "expected an array");
    for (size_t i = 0; i < added->size(); ++i) {
      const std::string path = "added_tokens[" + std::to_string(i) + "]";
      AddedToken token = added_token(r, r.object((*added)[i], path), path);
      token.id = static_cast<int32_t>(
          r.integer(r.need((*added)[i], path, "id"), path + ".id", 0, (1 << 24) - 1));
      config.added_tokens.push_back(std::move(token));
    }
  }
  parse_truncation_padding(r, json, config);
  if (!config_json.empty()) apply_tokenizer_config(config, config_json, config_where);
  return Tokenizer(std::move(config));
}

Tokenizer tokenizer_load_vocab(const std::string& vocab_path, const std::string& config_path) {
  const std::string vocab = read_text(vocab_path);
  const std::string config = config_path.empty() ? std::string() : read_text(config_path);
  return tokenizer_vocab_parse(vocab, vocab_path, config, config_path);
}

Tokenizer tokenizer_load_json(const std::string& path, const std::string& config_path) {
  const std::string json = read_text(path);
  const std::string config = config_path.empty() ? std::string() : read_text(config_path);
  return tokenizer_json_parse(json, path, config, config_path);
}

Tokenizer tokenizer_load(const std::string& folder) {
  namespace fs = std::filesystem;
  const fs::path dir(folder);
  const fs::path config = dir / "tokenizer_config.json";
  const std::string config_path = fs::exists(config) ? config.string() : std::string();
  if (fs::exists(dir / "tokenizer.json"))
    return tokenizer_load_json((dir / "tokenizer.json").string(), config_path);
  if (fs::exists(dir / "vocab.txt"))
    return tokenizer_load_vocab((dir / "vocab.txt").string(), config_path);
  if (fs::exists(dir / "merges.txt")) {
    fail(folder, "has merges.txt but no tokenizer.json: Kiln reads BPE tokenizers from "
                 "tokenizer.json (transformers' AutoTokenizer.from_pretrained(folder)"
                 ".save_pretrained(folder) writes it)");
  }
  fail(folder, "no tokenizer here: neither tokenizer.json nor vocab.txt");
}

}  // namespace kiln
