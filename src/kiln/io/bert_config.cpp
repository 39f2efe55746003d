// BertConfig: config.json reading (typed fields, label maps, unknown keys kept), checks, writing
// and the benchmark presets.
#include "kiln/io/bert_config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "kiln/io/atomic_file.h"
#include "kiln/io/json_util.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

// The keys BertConfig interprets; every other key lands in `extra`.
constexpr std::array<std::string_view, 23> kKnownKeys = {
    "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
    "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob",
    "max_position_embeddings", "type_vocab_size", "initializer_range", "layer_norm_eps",
    "pad_token_id", "position_embedding_type", "classifier_dropout", "problem_type", "id2label",
    "label2id", "num_labels", "architectures", "model_type", "torch_dtype", "dtype"};

constexpr std::array<std::string_view, 4> kHiddenActs = {"gelu", "gelu_new", "gelu_pytorch_tanh",
                                                         "relu"};
constexpr std::array<std::string_view, 3> kProblemTypes = {
    "regression", "single_label_classification", "multi_label_classification"};

template <size_t N>
std::string join(const std::array<std::string_view, N>& items) {
  std::string out;
  for (std::string_view item : items) out += (out.empty() ? "" : ", ") + std::string(item);
  return out;
}

template <size_t N>
bool contains(const std::array<std::string_view, N>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// Typed access to the keys of the top-level object; each key read is consumed.
class Fields {
 public:
  Fields(Json object, std::string_view where) : object_(std::move(object)), where_(where) {}

  // Absent keys leave `out` as it is (the default); null is accepted only for optionals.
  void integer(const char* key, int64_t& out) {
    if (const Json* value = take(key)) out = as_integer(key, *value);
  }
  void integer(const char* key, std::optional<int64_t>& out) {
    if (const Json* value = take(key))
      out = value->is_null() ? std::nullopt : std::optional(as_integer(key, *value));
  }
  void number(const char* key, double& out) {
    if (const Json* value = take(key)) out = as_number(key, *value);
  }
  void number(const char* key, std::optional<double>& out) {
    if (const Json* value = take(key))
      out = value->is_null() ? std::nullopt : std::optional(as_number(key, *value));
  }
  void string(const char* key, std::string& out) {
    if (const Json* value = take(key)) out = as_string(key, *value);
  }
  void string(const char* key, std::optional<std::string>& out) {
    if (const Json* value = take(key))
      out = value->is_null() ? std::nullopt : std::optional(as_string(key, *value));
  }

  // The value, or nullptr when absent; the key no longer counts as unknown.
  const Json* take(const char* key) {
    auto found = object_.find(key);
    if (found == object_.end()) return nullptr;
    taken_.insert(key);
    return &*found;
  }

  std::map<std::string, std::string> unknown() const {
    std::map<std::string, std::string> rest;
    for (const auto& [key, value] : object_.items()) {
      if (!taken_.contains(key)) rest[key] = value.dump();
    }
    return rest;
  }

  int64_t as_integer(std::string_view key, const Json& value) const {
    if (value.is_number_integer() &&
        !(value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX)) {
      return value.get<int64_t>();
    }
    wrong(key, value, "an integer");
  }
  double as_number(std::string_view key, const Json& value) const {
    if (!value.is_number()) wrong(key, value, "a number");
    return value.get<double>();
  }
  std::string as_string(std::string_view key, const Json& value) const {
    if (!value.is_string()) wrong(key, value, "a string");
    return value.get<std::string>();
  }
  [[noreturn]] void wrong(std::string_view key, const Json& value, const char* expected) const {
    fail(where_, '"', key, "\" must be ", expected, ", got ", value.dump());
  }

  std::string_view where() const { return where_; }

 private:
  Json object_;
  std::string_view where_;
  std::set<std::string> taken_;
};

// id2label as {"0": "neg", "1": "pos"}: keys must be exactly the ids 0 .. n-1.
std::vector<std::string> parse_id2label(const Json& value, Fields& fields) {
  if (!value.is_object()) fields.wrong("id2label", value, "an object");
  std::map<int64_t, std::string> by_id;
  for (const auto& [key, label] : value.items()) {
    int64_t id = -1;
    auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (error != std::errc() || end != key.data() + key.size() || id < 0) {
      fail(fields.where(), "\"id2label\" key \"", key, "\" is not a class id (0, 1, ...)");
    }
    if (!by_id.emplace(id, fields.as_string("id2label", label)).second) {
      fail(fields.where(), "\"id2label\" has class id ", id, " twice");
    }
  }
  std::vector<std::string> labels;
  for (const auto& [id, label] : by_id) {
    if (id != static_cast<int64_t>(labels.size())) {
      fail(fields.where(), "\"id2label\" has no class ", labels.size(), " (its ids must be 0 .. ",
           by_id.size() - 1, ")");
    }
    labels.push_back(label);
  }
  return labels;
}

std::map<std::string, int64_t> parse_label2id(const Json& value, Fields& fields) {
  if (!value.is_object()) fields.wrong("label2id", value, "an object");
  std::map<std::string, int64_t> ids;
  for (const auto& [label, id] : value.items()) ids[label] = fields.as_integer("label2id", id);
  return ids;
}

// id2label, label2id and num_labels together, with transformers' precedence (id2label first).
void read_labels(Fields& fields, BertConfig& config) {
  const Json* id2label = fields.take("id2label");
  const Json* label2id = fields.take("label2id");
  const Json* num_labels = fields.take("num_labels");
  if (id2label && id2label->is_null()) id2label = nullptr;
  if (label2id && label2id->is_null()) label2id = nullptr;
  if (num_labels && num_labels->is_null()) num_labels = nullptr;

  std::map<std::string, int64_t> inverse;
  if (label2id) inverse = parse_label2id(*label2id, fields);
  if (id2label) {
    config.id2label = parse_id2label(*id2label, fields);
  } else if (label2id) {
    Json by_id = Json::object();
    for (const auto& [label, id] : inverse) {
      if (id < 0 || by_id.contains(std::to_string(id))) {
        fail(fields.where(), "\"label2id\" maps '", label, "' to ", id,
             id < 0 ? ", not a class id" : ", which another label has");
      }
      by_id[std::to_string(id)] = label;
    }
    config.id2label = parse_id2label(by_id, fields);
  } else if (num_labels) {
    int64_t count = fields.as_integer("num_labels", *num_labels);
    if (count < 1) fail(fields.where(), "\"num_labels\" must be at least 1, got ", count);
    config.set_num_labels(count);
  }
  if (num_labels && fields.as_integer("num_labels", *num_labels) != config.num_labels()) {
    fail(fields.where(), "\"num_labels\" is ", fields.as_integer("num_labels", *num_labels),
         " but \"id2label\" has ", config.num_labels(), " classes");
  }
  if (label2id) {
    for (const auto& [label, id] : inverse) {
      if (id < 0 || id >= config.num_labels() ||
          config.id2label[static_cast<size_t>(id)] != label) {
        fail(fields.where(), "\"label2id\" maps '", label, "' to ", id,
             " but \"id2label\" does not map ", id, " to it");
      }
    }
    if (static_cast<int64_t>(inverse.size()) != config.num_labels()) {
      fail(fields.where(), "\"label2id\" has ", inverse.size(), " labels but \"id2label\" has ",
           config.num_labels());
    }
  }
}

void read_architectures(Fields& fields, BertConfig& config) {
  const Json* value = fields.take("architectures");
  if (value == nullptr || value->is_null()) return;
  if (!value->is_array()) fields.wrong("architectures", *value, "an array of strings");
  for (const Json& name : *value)
    config.architectures.push_back(fields.as_string("architectures", name));
}

// transformers 4 writes "torch_dtype", transformers 5 writes "dtype"; both mean the same.
void read_torch_dtype(Fields& fields, BertConfig& config) {
  std::optional<std::string> old_name, new_name;
  fields.string("torch_dtype", old_name);
  fields.string("dtype", new_name);
  if (old_name && new_name && *old_name != *new_name) {
    fail(fields.where(), "\"torch_dtype\" is \"", *old_name, "\" but \"dtype\" is \"", *new_name,
         '"');
  }
  config.torch_dtype = old_name ? old_name : new_name;
}

void check_positive(std::string_view where, const char* key, int64_t value) {
  check(value > 0, where, '"', key, "\" must be positive, got ", value);
}

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

void check_probability(std::string_view where, const char* key, double value) {
  check(value >= 0.0 && value < 1.0, where, '"', key, "\" must be in [0, 1), got ", value);
}

}  // namespace

void BertConfig::set_num_labels(int64_t count) {
  check(count >= 1, "BertConfig", "num_labels must be at least 1, got ", count);
  id2label.clear();
  for (int64_t i = 0; i < count; ++i) id2label.push_back("LABEL_" + std::to_string(i));
}

BertConfig bert_config_parse(std::string_view json_text, std::string_view where) {
  BertConfig config = bert_config_parse_over(json_text, where, BertConfig());
  bert_config_check(config, where);
  return config;
}

BertConfig bert_config_parse_over(std::string_view json_text, std::string_view where,
                                  BertConfig defaults) {
  Json object = json_parse(json_text, where);
  if (!object.is_object()) fail(where, "config is a JSON ", object.type_name(), ", not an object");
  Fields fields(std::move(object), where);
  BertConfig config = std::move(defaults);
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
  fields.string("problem_type", config.problem_type);
  fields.string("model_type", config.model_type);
  read_labels(fields, config);
  read_architectures(fields, config);
  read_torch_dtype(fields, config);
  config.extra = fields.unknown();
  bert_config_check_fields(config, where);
  return config;
}

BertConfig bert_config_read(const std::string& path) {
  return bert_config_parse(config_file_text(path), path);
}

std::string config_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open config");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(path, "cannot read config");
  return text.str();
}

void bert_config_check(const BertConfig& config, std::string_view where) {
  check(config.model_type == "bert", where, "\"model_type\" is \"", config.model_type,
        "\", not \"bert\"");
  bert_config_check_fields(config, where);
}

void bert_config_check_fields(const BertConfig& config, std::string_view where) {
  check_positive(where, "vocab_size", config.vocab_size);
  check_positive(where, "hidden_size", config.hidden_size);
  check_positive(where, "num_hidden_layers", config.num_hidden_layers);
  check_positive(where, "num_attention_heads", config.num_attention_heads);
  check_positive(where, "intermediate_size", config.intermediate_size);
  check_positive(where, "max_position_embeddings", config.max_position_embeddings);
  check_positive(where, "type_vocab_size", config.type_vocab_size);
  check_model_size(config, where);
  check(config.hidden_size % config.num_attention_heads == 0, where, "hidden_size ",
        config.hidden_size, " is not a multiple of num_attention_heads ",
        config.num_attention_heads);
  check(contains(kHiddenActs, config.hidden_act), where, "\"hidden_act\" \"", config.hidden_act,
        "\" is not supported (Kiln implements ", join(kHiddenActs), ")");
  check(config.position_embedding_type == "absolute", where, "\"position_embedding_type\" \"",
        config.position_embedding_type, "\" is not supported (Kiln implements absolute)");
  check_probability(where, "hidden_dropout_prob", config.hidden_dropout_prob);
  check_probability(where, "attention_probs_dropout_prob", config.attention_probs_dropout_prob);
  if (config.classifier_dropout)
    check_probability(where, "classifier_dropout", *config.classifier_dropout);
  check(config.layer_norm_eps > 0.0, where, "\"layer_norm_eps\" must be positive, got ",
        config.layer_norm_eps);
  check(config.initializer_range >= 0.0, where, "\"initializer_range\" must not be negative, got ",
        config.initializer_range);
  if (config.pad_token_id) {
    check(*config.pad_token_id >= 0 && *config.pad_token_id < config.vocab_size, where,
          "\"pad_token_id\" ", *config.pad_token_id, " is outside the vocabulary [0, ",
          config.vocab_size, ")");
  }
  if (config.problem_type) {
    check(contains(kProblemTypes, *config.problem_type), where, "\"problem_type\" \"",
          *config.problem_type, "\" is not one of ", join(kProblemTypes));
  }
  check(!config.id2label.empty(), where, "\"id2label\" is empty (a model needs at least 1 class)");
  std::set<std::string_view> labels;
  for (const std::string& label : config.id2label) {
    check(labels.insert(label).second, where, "\"id2label\" names class '", label,
          "' twice (label2id could not map it back)");
  }
  for (const auto& [key, text] : config.extra) {
    check(!contains(kKnownKeys, key), where, "extra key \"", key, "\" is a BertConfig field");
    check(Json::accept(text), where, "extra key \"", key, "\" holds invalid JSON: ", text);
  }
}

std::string bert_config_to_json(const BertConfig& config) {
  bert_config_check(config, "BertConfig");
  return bert_config_fields_to_json(config);
}

std::string bert_config_fields_to_json(const BertConfig& config) {
  bert_config_check_fields(config, "config");
  Json out = Json::object();
  for (const auto& [key, text] : config.extra) out[key] = Json::parse(text);
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
  if (config.problem_type) out["problem_type"] = *config.problem_type;
  out["model_type"] = config.model_type;
  if (!config.architectures.empty()) out["architectures"] = config.architectures;
  if (config.torch_dtype) out["torch_dtype"] = *config.torch_dtype;
  Json id2label = Json::object(), label2id = Json::object();
  for (size_t id = 0; id < config.id2label.size(); ++id) {
    id2label[std::to_string(id)] = config.id2label[id];
    label2id[config.id2label[id]] = id;
  }
  out["id2label"] = id2label;
  out["label2id"] = label2id;
  return out.dump(2) + "\n";
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
