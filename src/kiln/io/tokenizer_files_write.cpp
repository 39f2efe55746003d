// Writing a tokenizer as transformers saves it: tokenizer.json, tokenizer_config.json,
// special_tokens_map.json, and for WordPiece vocab.txt.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "kiln/io/atomic_file.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Ordered = nlohmann::ordered_json;

const char* side_name(Side side, bool capitalized) {
  if (side == Side::right) return capitalized ? "Right" : "right";
  return capitalized ? "Left" : "left";
}

// HF tokenizers' key order.
Ordered added_token_json(const AddedToken& token) {
  Ordered out;
  out["id"] = token.id;
  out["content"] = token.content;
  out["single_word"] = token.single_word;
  out["lstrip"] = token.lstrip;
  out["rstrip"] = token.rstrip;
  out["normalized"] = token.normalized;
  out["special"] = token.special;
  return out;
}

Ordered truncation_json(const TokenizerConfig& config) {
  const EncodeOptions& d = config.defaults;
  if (d.truncation == Truncation::none) return nullptr;
  static constexpr const char* kStrategies[] = {"", "LongestFirst", "OnlyFirst", "OnlySecond"};
  Ordered out;
  out["direction"] = side_name(d.truncation_side, true);
  out["max_length"] = d.max_length.value_or(config.model_max_length.value_or(512));
  out["strategy"] = kStrategies[static_cast<int>(d.truncation)];
  out["stride"] = d.stride;
  return out;
}

Ordered padding_json(const Tokenizer& tokenizer) {
  const TokenizerConfig& config = tokenizer.config();
  const EncodeOptions& d = config.defaults;
  if (d.padding == Padding::none) return nullptr;
  Ordered out;
  if (d.padding == Padding::longest) {
    out["strategy"] = "BatchLongest";
  } else {
    out["strategy"] = {{"Fixed", d.max_length.value_or(config.model_max_length.value_or(512))}};
  }
  out["direction"] = side_name(d.padding_side, true);
  out["pad_to_multiple_of"] = d.pad_to_multiple_of > 0 ? Ordered(d.pad_to_multiple_of) : Ordered();
  out["pad_id"] = tokenizer.pad_id();
  out["pad_type_id"] = config.pad_type_id;
  out["pad_token"] = config.special.pad;
  return out;
}

Ordered template_json(const std::vector<TemplatePiece>& pieces) {
  Ordered out = Ordered::array();
  for (const TemplatePiece& piece : pieces) {
    if (piece.sequence >= 0) {
      out.push_back(
          {{"Sequence", {{"id", piece.sequence == 0 ? "A" : "B"}, {"type_id", piece.type_id}}}});
    } else {
      out.push_back({{"SpecialToken", {{"id", piece.special}, {"type_id", piece.type_id}}}});
    }
  }
  return out;
}

Ordered byte_level_json(const ByteLevelOptions& options) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", options.add_prefix_space},
          {"trim_offsets", options.trim_offsets},
          {"use_regex", options.use_regex}};
}

Ordered post_processor_json(const PostProcessor& processor) {
  if (processor.roberta) {  // single: <s> $A </s>
    const std::string& cls = processor.single.at(0).special;
    const std::string& sep = processor.single.at(2).special;
    return {{"type", "RobertaProcessing"},
            {"sep", {sep, processor.special(sep).ids.at(0)}},
            {"cls", {cls, processor.special(cls).ids.at(0)}},
            {"trim_offsets", processor.byte_level->trim_offsets},
            {"add_prefix_space", processor.byte_level->add_prefix_space}};
  }
  if (processor.byte_level) return byte_level_json(*processor.byte_level);
  if (processor.single.empty()) return nullptr;
  Ordered specials = Ordered::object();
  for (const TemplateSpecialToken& special : processor.special_tokens) {
    specials[special.name] = {
        {"id", special.name}, {"ids", special.ids}, {"tokens", special.tokens}};
  }
  Ordered out;
  out["type"] = "TemplateProcessing";
  out["single"] = template_json(processor.single);
  out["pair"] = template_json(processor.pair);
  out["special_tokens"] = std::move(specials);
  return out;
}

// Stands for the vocabulary in the dump until vocab_text replaces it: ordered_json inserts in
// linear time, too slow for 30k entries. Searched for with its key, which no other part has.
constexpr std::string_view kVocabPlaceholder = "\"@kiln-vocab@\"";
constexpr std::string_view kVocabEntry = "\"vocab\": \"@kiln-vocab@\"";

// The "vocab" object, ordered by id as HF writes it; an id whose token reappears later (a
// repeated vocab.txt line) is left out, the token mapping to the later id.
std::string vocab_text(const Vocab& vocab, const std::string& indent) {
  std::string out = "{";
  bool first = true;
  for (int32_t id = 0; id < vocab.size(); ++id) {
    std::string_view token = vocab.token(id);
    if (vocab.find(token) != id) continue;
    out += first ? "\n" : ",\n";
    out += indent + "  " + Ordered(std::string(token)).dump(-1, ' ', false) + ": " +
           std::to_string(id);
    first = false;
  }
  return out + "\n" + indent + "}";
}

// normalizer, pre_tokenizer, post_processor, decoder and model of a WordPiece tokenizer.
void write_wordpiece_pipeline(const TokenizerConfig& config, const Ordered& vocab, Ordered& json) {
  const NormalizerOptions& n = config.normalizer;
  json["normalizer"] = {{"type", "BertNormalizer"},
                        {"clean_text", n.clean_text},
                        {"handle_chinese_chars", n.handle_chinese_chars},
                        {"strip_accents", n.strip_accents ? Ordered(*n.strip_accents) : Ordered()},
                        {"lowercase", n.lowercase}};
  json["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  json["post_processor"] = post_processor_json(config.post_processor);
  json["decoder"] = {{"type", "WordPiece"},
                     {"prefix", config.wordpiece.continuing_subword_prefix},
                     {"cleanup", config.decode_cleanup}};
  json["model"] = {{"type", "WordPiece"},
                   {"unk_token", config.wordpiece.unk_token},
                   {"continuing_subword_prefix", config.wordpiece.continuing_subword_prefix},
                   {"max_input_chars_per_word", config.wordpiece.max_input_chars_per_word},
                   {"vocab", vocab}};
}

// tokenizer_config.json of a BPE tokenizer, keys sorted: the special tokens it has (GPT-2's pad
// token is null) and add_prefix_space / trim_offsets where they restate tokenizer.json (they
// override it when transformers loads the folder).
std::string bpe_config_json(const TokenizerConfig& config, Ordered added_tokens_decoder) {
  const SpecialTokens& s = config.special;
  const PostProcessor& post = config.post_processor;
  auto token = [](const std::string& name) { return name.empty() ? Ordered() : Ordered(name); };
  Ordered json;
  if (!post.roberta || post.byte_level->add_prefix_space == config.byte_level.add_prefix_space)
    json["add_prefix_space"] = config.byte_level.add_prefix_space;
  json["added_tokens_decoder"] = std::move(added_tokens_decoder);
  if (!s.bos.empty()) json["bos_token"] = s.bos;
  json["clean_up_tokenization_spaces"] = false;
  if (!s.cls.empty()) json["cls_token"] = s.cls;
  if (!s.eos.empty()) json["eos_token"] = s.eos;
  if (!s.mask.empty()) json["mask_token"] = s.mask;
  if (config.model_max_length) json["model_max_length"] = *config.model_max_length;
  json["pad_token"] = token(s.pad);
  json["padding_side"] = side_name(config.defaults.padding_side, false);
  if (!s.sep.empty()) json["sep_token"] = s.sep;
  json["tokenizer_class"] = config.tokenizer_class.empty() ? std::string("PreTrainedTokenizerFast")
                                                           : config.tokenizer_class;
  if (post.roberta) json["trim_offsets"] = post.byte_level->trim_offsets;
  json["truncation_side"] = side_name(config.defaults.truncation_side, false);
  json["unk_token"] = token(s.unk);
  return json.dump(2, ' ', false) + "\n";
}

}  // namespace

std::string tokenizer_to_json(const Tokenizer& tokenizer) {
  const TokenizerConfig& config = tokenizer.config();
  Ordered json;
  json["version"] = "1.0";
  json["truncation"] = truncation_json(config);
  json["padding"] = padding_json(tokenizer);
  Ordered added = Ordered::array();
  for (const AddedToken& token : config.added_tokens) added.push_back(added_token_json(token));
  json["added_tokens"] = std::move(added);
  const Ordered vocab(kVocabPlaceholder.substr(1, kVocabPlaceholder.size() - 2));
  if (config.model == TokenizerModel::bpe) {
    const BpeOptions& bpe = config.bpe;
    auto or_null = [](const std::string& text) { return text.empty() ? Ordered() : Ordered(text); };
    // "a b" as tokenizers before 0.20 read them, unless a token has a space: then ["a", "b"].
    const bool spaced = std::any_of(bpe.merges.begin(), bpe.merges.end(), [](const auto& merge) {
      return merge.first.find(' ') != std::string::npos ||
             merge.second.find(' ') != std::string::npos;
    });
    Ordered merges = Ordered::array();
    for (const auto& [a, b] : bpe.merges) {
      merges.push_back(spaced ? Ordered({a, b}) : Ordered(a + " " + b));
    }
    json["normalizer"] = nullptr;
    json["pre_tokenizer"] = byte_level_json(config.byte_level);
    json["post_processor"] = post_processor_json(config.post_processor);
    json["decoder"] =
        config.byte_level_decoder ? byte_level_json(*config.byte_level_decoder) : Ordered();
    json["model"] = {{"type", "BPE"},
                     {"dropout", nullptr},
                     {"unk_token", or_null(bpe.unk_token)},
                     {"continuing_subword_prefix", or_null(bpe.continuing_subword_prefix)},
                     {"end_of_word_suffix", or_null(bpe.end_of_word_suffix)},
                     {"fuse_unk", bpe.fuse_unk},
                     {"byte_fallback", false},
                     {"ignore_merges", bpe.ignore_merges},
                     {"vocab", vocab},
                     {"merges", std::move(merges)}};
  } else {
    write_wordpiece_pipeline(config, vocab, json);
  }
  std::string text = json.dump(2, ' ', false);
  const size_t at = text.find(kVocabEntry);
  text.replace(at + kVocabEntry.size() - kVocabPlaceholder.size(), kVocabPlaceholder.size(),
               vocab_text(config.vocab, "    "));
  return text + "\n";
}

std::string tokenizer_config_to_json(const Tokenizer& tokenizer) {
  const TokenizerConfig& config = tokenizer.config();
  Ordered decoder = Ordered::object();
  std::vector<AddedToken> added = config.added_tokens;
  std::sort(added.begin(), added.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const AddedToken& token : added) {
    decoder[std::to_string(token.id)] = {
        {"content", token.content},         {"lstrip", token.lstrip},
        {"normalized", token.normalized},   {"rstrip", token.rstrip},
        {"single_word", token.single_word}, {"special", token.special}};
  }
  if (config.model == TokenizerModel::bpe) return bpe_config_json(config, std::move(decoder));
  // Keys sorted, as transformers writes them.
  Ordered json;
  json["added_tokens_decoder"] = std::move(decoder);
  json["clean_up_tokenization_spaces"] = false;  // the WordPiece decoder's cleanup does it
  json["cls_token"] = config.special.cls;
  json["do_lower_case"] = config.normalizer.lowercase;
  json["mask_token"] = config.special.mask;
  if (config.model_max_length) json["model_max_length"] = *config.model_max_length;
  json["pad_token"] = config.special.pad;
  json["padding_side"] = side_name(config.defaults.padding_side, false);
  json["sep_token"] = config.special.sep;
  json["strip_accents"] =
      config.normalizer.strip_accents ? Ordered(*config.normalizer.strip_accents) : Ordered();
  json["tokenize_chinese_chars"] = config.normalizer.handle_chinese_chars;
  json["tokenizer_class"] =
      config.tokenizer_class.empty() ? std::string("BertTokenizer") : config.tokenizer_class;
  json["truncation_side"] = side_name(config.defaults.truncation_side, false);
  json["unk_token"] = config.special.unk;
  return json.dump(2, ' ', false) + "\n";
}

std::string tokenizer_special_tokens_map_to_json(const Tokenizer& tokenizer) {
  const SpecialTokens& s = tokenizer.config().special;
  Ordered json;
  if (tokenizer.config().model == TokenizerModel::wordpiece) {
    json["cls_token"] = s.cls;
    json["mask_token"] = s.mask;
    json["pad_token"] = s.pad;
    json["sep_token"] = s.sep;
    json["unk_token"] = s.unk;
    return json.dump(2, ' ', false) + "\n";
  }
  // BPE: the tokens it has, keys sorted.
  for (const auto& [key, name] : {std::pair{"bos_token", &s.bos}, std::pair{"cls_token", &s.cls},
                                  std::pair{"eos_token", &s.eos}, std::pair{"mask_token", &s.mask},
                                  std::pair{"pad_token", &s.pad}, std::pair{"sep_token", &s.sep},
                                  std::pair{"unk_token", &s.unk}}) {
    if (!name->empty()) json[key] = *name;
  }
  return json.dump(2, ' ', false) + "\n";
}

std::string tokenizer_vocab_to_text(const Tokenizer& tokenizer) {
  const Vocab& vocab = tokenizer.config().vocab;
  std::string text;
  for (int32_t id = 0; id < vocab.size(); ++id) {
    text.append(vocab.token(id));
    text.push_back('\n');
  }
  return text;
}

void tokenizer_save(const Tokenizer& tokenizer, const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::create_directories(folder, error);
  check(!error, folder, "cannot create the folder: ", error.message());
  const fs::path dir(folder);
  if (tokenizer.config().model == TokenizerModel::wordpiece)
    write_file_atomically((dir / "vocab.txt").string(), tokenizer_vocab_to_text(tokenizer));
  write_file_atomically((dir / "tokenizer_config.json").string(),
                        tokenizer_config_to_json(tokenizer));
  write_file_atomically((dir / "special_tokens_map.json").string(),
                        tokenizer_special_tokens_map_to_json(tokenizer));
  write_file_atomically((dir / "tokenizer.json").string(), tokenizer_to_json(tokenizer));
}

}  // namespace kiln
