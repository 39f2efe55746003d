// BertConfig: config.json reading (typed fields, label maps, unknown keys kept), checks, writing
// and the benchmark presets.
#include "kiln/models/bert_config.h"

#include <array>
#include <set>

#include "kiln/io/atomic_file.h"
#include "kiln/io/config_fields.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

// The keys BertConfig reads besides the common ones (config_common_keys); every other key lands
// in `extra`.
const std::set<std::string_view> kBertKeys = {
    "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
    "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob",
    "max_position_embeddings", "type_vocab_size", "initializer_range", "layer_norm_eps",
    "pad_token_id", "position_embedding_type", "classifier_dropout"};

// A model sized beyond any machine is a broken config, better refused here than by the
// allocator (or the kernel's OOM killer) once the weights are built.
constexpr double kMaxParameters = 1e11;

void check_model_size(const BertConfig& config, std::string_view where) {
  auto size = [](int64_t value) { return static_cast<double>(value); };
  const double hidden = size(config.hidden_size);
  const double embeddings = (size(config.vocab_size) + size(config.max_position_embeddings) +
                             size(config.type_vocab_size)) * hidden;
  const double layer = 4 * hidden * hidden + 2 * hidden * size(config.intermediate_size);
  const double parameters = embeddings + size(config.num_hidden_layers) * layer;
  check(parameters <= kMaxParameters, where, "\"vocab_size\" ", config.vocab_size,
        ", \"hidden_size\" ", config.hidden_size, ", \"intermediate_size\" ",
        config.intermediate_size, " and \"num_hidden_layers\" ", config.num_hidden_layers,
        " make a model of about ", parameters, " parameters, beyond Kiln's limit of ",
        kMaxParameters);
}

}  // namespace

BertConfig bert_config_parse(std::string_view json_text, std::string_view where) {
  ConfigFields fields(json_text, where);
  BertConfig config;
  bert_config_read_fields(fields, config);
  config_read_common(fields, config);
  bert_config_check(config, where);
  return config;
}

void bert_config_read_fields(ConfigFields& fields, BertConfig& config) {
  fields.integer("vocab_size", config.vocab_size);
  fields.integer("hidden_size", config.hidden_size);
  fields.integer("num_hidden_layers", config.num_hidden_layers);
  fields.integer("num_attention_heads", config.num_attention_heads);
  fields.integer("intermediate_size", config.intermediate_size);
  fields.string("hidden_act", config.hidden_act);
  fields.number("hidden_dropout_prob", config.hidden_dropout_prob);
  fields.number("attention_probs_dropout_prob", config.attention_probs_dropout_prob);
  fields.integer("max_position_embeddings", config.max_position_embeddings);
  fields.integer("type_vocab_size", config.type_vocab_size);
  fields.number("initializer_range", config.initializer_range);
  fields.number("layer_norm_eps", config.layer_norm_eps);
  fields.integer("pad_token_id", config.pad_token_id);
  fields.string("position_embedding_type", config.position_embedding_type);
  fields.number("classifier_dropout", config.classifier_dropout);
}

BertConfig bert_config_read(const std::string& path) {
  return bert_config_parse(config_file_text(path), path);
}

void bert_config_check(const BertConfig& config, std::string_view where) {
  config_check_model_type(where, config.model_type, "bert");
  bert_config_check_fields(config, {}, where);
}

void bert_config_check_fields(const BertConfig& config,
                              const std::set<std::string_view>& family_keys,
                              std::string_view where) {
  config_check_positive(where, "vocab_size", config.vocab_size);
  config_check_positive(where, "hidden_size", config.hidden_size);
  config_check_positive(where, "num_hidden_layers", config.num_hidden_layers);
  config_check_positive(where, "num_attention_heads", config.num_attention_heads);
  config_check_positive(where, "intermediate_size", config.intermediate_size);
  config_check_positive(where, "max_position_embeddings", config.max_position_embeddings);
  config_check_positive(where, "type_vocab_size", config.type_vocab_size);
  check_model_size(config, where);
  check(config.hidden_size % config.num_attention_heads == 0, where, "hidden_size ",
        config.hidden_size, " is not a multiple of num_attention_heads ",
        config.num_attention_heads);
  config_check_activation(where, "hidden_act", config.hidden_act);
  check(config.position_embedding_type == "absolute", where, "\"position_embedding_type\" \"",
        config.position_embedding_type, "\" is not supported (Kiln implements absolute)");
  config_check_probability(where, "hidden_dropout_prob", config.hidden_dropout_prob);
  config_check_probability(where, "attention_probs_dropout_prob",
                           config.attention_probs_dropout_prob);
  if (config.classifier_dropout)
    config_check_probability(where, "classifier_dropout", *config.classifier_dropout);
  check(config.layer_norm_eps > 0.0, where, "\"layer_norm_eps\" must be positive, got ",
        config.layer_norm_eps);
  config_check_initializer_range(where, config.initializer_range);
  config_check_token_id(where, "pad_token_id", config.pad_token_id, config.vocab_size);
  std::set<std::string_view> keys = kBertKeys;
  keys.insert(family_keys.begin(), family_keys.end());
  config_check_common(config, keys, where);
}

std::string bert_config_to_json(const BertConfig& config) {
  bert_config_check(config, "BertConfig");
  Json out = Json::object();
  bert_config_write_fields(out, config);
  return out.dump(2) + "\n";
}

void bert_config_write_fields(nlohmann::json& out, const BertConfig& config) {
  config_write_common(out, config);
  out["vocab_size"] = config.vocab_size;
  out["hidden_size"] = config.hidden_size;
  out["num_hidden_layers"] = config.num_hidden_layers;
  out["num_attention_heads"] = config.num_attention_heads;
  out["intermediate_size"] = config.intermediate_size;
  out["hidden_act"] = config.hidden_act;
  out["hidden_dropout_prob"] = config.hidden_dropout_prob;
  out["attention_probs_dropout_prob"] = config.attention_probs_dropout_prob;
  out["max_position_embeddings"] = config.max_position_embeddings;
  out["type_vocab_size"] = config.type_vocab_size;
  out["initializer_range"] = config.initializer_range;
  out["layer_norm_eps"] = config.layer_norm_eps;
  out["pad_token_id"] = config.pad_token_id ? Json(*config.pad_token_id) : Json(nullptr);
  out["position_embedding_type"] = config.position_embedding_type;
  out["classifier_dropout"] =
      config.classifier_dropout ? Json(*config.classifier_dropout) : Json(nullptr);
}

void bert_config_write(const std::string& path, const BertConfig& config) {
  write_file_atomically(path, bert_config_to_json(config));
}

BertConfig bert_config_preset(std::string_view name) {
  struct Preset {
    std::string_view name;
    int64_t layers, hidden, heads, intermediate;
  };
  static constexpr std::array<Preset, 6> kPresets = {{{"tiny", 2, 128, 2, 512},
                                                      {"mini", 4, 256, 4, 1024},
                                                      {"small", 4, 512, 8, 2048},
                                                      {"medium", 8, 512, 8, 2048},
                                                      {"base", 12, 768, 12, 3072},
                                                      {"large", 24, 1024, 16, 4096}}};
  for (const Preset& preset : kPresets) {
    if (preset.name != name) continue;
    BertConfig config;
    config.num_hidden_layers = preset.layers;
    config.hidden_size = preset.hidden;
    config.num_attention_heads = preset.heads;
    config.intermediate_size = preset.intermediate;
    return config;
  }
  fail("bert_config_preset", "unknown preset '", name,
       "' (tiny, mini, small, medium, base, large)");
}

}  // namespace kiln
