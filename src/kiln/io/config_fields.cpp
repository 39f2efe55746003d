// config.json's shared parts: typed key access, the label maps, architectures, torch_dtype,
// and the checks and writing of the fields every family's config has.
#include "kiln/io/config_fields.h"

#include <array>
#include <charconv>
#include <fstream>
#include <sstream>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 3> kProblemTypes = {
    "regression", "single_label_classification", "multi_label_classification"};

// id2label as {"0": "neg", "1": "pos"}: keys must be exactly the ids 0 .. n-1.
std::vector<std::string> parse_id2label(const Json& value, ConfigFields& fields) {
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

std::map<std::string, int64_t> parse_label2id(const Json& value, ConfigFields& fields) {
  if (!value.is_object()) fields.wrong("label2id", value, "an object");
  std::map<std::string, int64_t> ids;
  for (const auto& [label, id] : value.items()) ids[label] = fields.as_integer("label2id", id);
  return ids;
}

}  // namespace

ConfigFields::ConfigFields(std::string_view json_text, std::string_view where)
    : object_(json_parse(json_text, where)), where_(where) {
  if (!object_.is_object()) {
    fail(where, "config is a JSON ", object_.type_name(), ", not an object");
  }
}

void ConfigFields::integer(const char* key, int64_t& out) {
  if (const Json* value = take(key)) out = as_integer(key, *value);
}
void ConfigFields::integer(const char* key, std::optional<int64_t>& out) {
  if (const Json* value = take(key))
    out = value->is_null() ? std::nullopt : std::optional(as_integer(key, *value));
}
void ConfigFields::number(const char* key, double& out) {
  if (const Json* value = take(key)) out = as_number(key, *value);
}
void ConfigFields::number(const char* key, std::optional<double>& out) {
  if (const Json* value = take(key))
    out = value->is_null() ? std::nullopt : std::optional(as_number(key, *value));
}
void ConfigFields::string(const char* key, std::string& out) {
  if (const Json* value = take(key)) out = as_string(key, *value);
}
void ConfigFields::string(const char* key, std::optional<std::string>& out) {
  if (const Json* value = take(key))
    out = value->is_null() ? std::nullopt : std::optional(as_string(key, *value));
}
void ConfigFields::boolean(const char* key, bool& out) {
  if (const Json* value = take(key)) {
    if (!value->is_boolean()) wrong(key, *value, "true or false");
    out = value->get<bool>();
  }
}

const ConfigFields::Json* ConfigFields::take(const char* key) {
  auto found = object_.find(key);
  if (found == object_.end()) return nullptr;
  taken_.insert(key);
  return &*found;
}

std::map<std::string, std::string> ConfigFields::unknown() const {
  std::map<std::string, std::string> rest;
  for (const auto& [key, value] : object_.items()) {
    if (!taken_.contains(key)) rest[key] = value.dump();
  }
  return rest;
}

int64_t ConfigFields::as_integer(std::string_view key, const Json& value) const {
  if (value.is_number_integer() &&
      !(value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX)) {
    return value.get<int64_t>();
  }
  wrong(key, value, "an integer");
}
double ConfigFields::as_number(std::string_view key, const Json& value) const {
  if (!value.is_number()) wrong(key, value, "a number");
  return value.get<double>();
}
std::string ConfigFields::as_string(std::string_view key, const Json& value) const {
  if (!value.is_string()) wrong(key, value, "a string");
  return value.get<std::string>();
}
void ConfigFields::wrong(std::string_view key, const Json& value, const char* expected) const {
  fail(where_, '"', key, "\" must be ", expected, ", got ", value.dump());
}

std::string config_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open config");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(path, "cannot read config");
  return text.str();
}

std::vector<std::string> config_default_labels(int64_t count) {
  check(count >= 1, "config", "num_labels must be at least 1, got ", count);
  std::vector<std::string> labels;
  for (int64_t i = 0; i < count; ++i) labels.push_back("LABEL_" + std::to_string(i));
  return labels;
}

void config_read_labels(ConfigFields& fields, std::vector<std::string>& id2label) {
  const Json* id2label_json = fields.take("id2label");
  const Json* label2id = fields.take("label2id");
  const Json* num_labels = fields.take("num_labels");
  if (id2label_json && id2label_json->is_null()) id2label_json = nullptr;
  if (label2id && label2id->is_null()) label2id = nullptr;
  if (num_labels && num_labels->is_null()) num_labels = nullptr;

  std::map<std::string, int64_t> inverse;
  if (label2id) inverse = parse_label2id(*label2id, fields);
  if (id2label_json) {
    id2label = parse_id2label(*id2label_json, fields);
  } else if (label2id) {
    Json by_id = Json::object();
    for (const auto& [label, id] : inverse) {
      if (id < 0 || by_id.contains(std::to_string(id))) {
        fail(fields.where(), "\"label2id\" maps '", label, "' to ", id,
             id < 0 ? ", not a class id" : ", which another label has");
      }
      by_id[std::to_string(id)] = label;
    }
    id2label = parse_id2label(by_id, fields);
  } else if (num_labels) {
    int64_t count = fields.as_integer("num_labels", *num_labels);
    if (count < 1) fail(fields.where(), "\"num_labels\" must be at least 1, got ", count);
    id2label = config_default_labels(count);
  }
  const auto classes = static_cast<int64_t>(id2label.size());
  if (num_labels && fields.as_integer("num_labels", *num_labels) != classes) {
    fail(fields.where(), "\"num_labels\" is ", fields.as_integer("num_labels", *num_labels),
         " but \"id2label\" has ", classes, " classes");
  }
  if (label2id) {
    for (const auto& [label, id] : inverse) {
      if (id < 0 || id >= classes || id2label[static_cast<size_t>(id)] != label) {
        fail(fields.where(), "\"label2id\" maps '", label, "' to ", id,
             " but \"id2label\" does not map ", id, " to it");
      }
    }
    if (static_cast<int64_t>(inverse.size()) != classes) {
      fail(fields.where(), "\"label2id\" has ", inverse.size(), " labels but \"id2label\" has ",
           classes);
    }
  }
}

void config_read_architectures(ConfigFields& fields, std::vector<std::string>& architectures) {
  const Json* value = fields.take("architectures");
  if (value == nullptr || value->is_null()) return;
  if (!value->is_array()) fields.wrong("architectures", *value, "an array of strings");
  for (const Json& name : *value)
    architectures.push_back(fields.as_string("architectures", name));
}

void config_read_torch_dtype(ConfigFields& fields, std::optional<std::string>& torch_dtype) {
  std::optional<std::string> old_name, new_name;
  fields.string("torch_dtype", old_name);
  fields.string("dtype", new_name);
  if (old_name && new_name && *old_name != *new_name) {
    fail(fields.where(), "\"torch_dtype\" is \"", *old_name, "\" but \"dtype\" is \"", *new_name,
         '"');
  }
  torch_dtype = old_name ? old_name : new_name;
}

void config_check_model_type(std::string_view where, const std::string& model_type,
                             std::string_view family) {
  check(model_type == family, where, "\"model_type\" is \"", model_type, "\", not \"", family,
        '"');
}

void config_check_initializer_range(std::string_view where, double value) {
  check(value >= 0.0, where, "\"initializer_range\" must not be negative, got ", value);
}

void config_check_token_id(std::string_view where, const char* key,
                           const std::optional<int64_t>& id, int64_t vocab_size) {
  if (!id) return;
  check(*id >= 0 && *id < vocab_size, where, '"', key, "\" ", *id,
        " is outside the vocabulary [0, ", vocab_size, ")");
}

void config_check_positive(std::string_view where, const char* key, int64_t value) {
  check(value > 0, where, '"', key, "\" must be positive, got ", value);
}

void config_check_probability(std::string_view where, const char* key, double value) {
  check(value >= 0.0 && value < 1.0, where, '"', key, "\" must be in [0, 1), got ", value);
}

void config_check_activation(std::string_view where, const char* key, const std::string& name) {
  static const std::set<std::string_view> known = {"gelu", "gelu_new", "gelu_pytorch_tanh",
                                                   "relu"};
  check(known.contains(name), where, '"', key, "\" \"", name,
        "\" is not supported (Kiln implements gelu, gelu_new, gelu_pytorch_tanh, relu)");
}

const std::set<std::string_view>& config_common_keys() {
  static const std::set<std::string_view> keys = {
      "problem_type", "model_type", "id2label", "label2id", "num_labels",
      "architectures", "torch_dtype", "dtype"};
  return keys;
}

void config_check_common_fields(const std::optional<std::string>& problem_type,
                                const std::vector<std::string>& id2label,
                                const std::map<std::string, std::string>& extra,
                                const std::set<std::string_view>& family_keys,
                                std::string_view where) {
  if (problem_type) {
    bool known = false;
    std::string names;
    for (std::string_view name : kProblemTypes) {
      known |= name == *problem_type;
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    check(known, where, "\"problem_type\" \"", *problem_type, "\" is not one of ", names);
  }
  check(!id2label.empty(), where, "\"id2label\" is empty (a model needs at least 1 class)");
  std::set<std::string_view> labels;
  for (const std::string& label : id2label) {
    check(labels.insert(label).second, where, "\"id2label\" names class '", label,
          "' twice (label2id could not map it back)");
  }
  for (const auto& [key, text] : extra) {
    check(!family_keys.contains(key) && !config_common_keys().contains(key), where,
          "extra key \"", key, "\" is a field of the config");
    check(Json::accept(text), where, "extra key \"", key, "\" holds invalid JSON: ", text);
  }
}

void config_write_common_fields(Json& out, const std::optional<std::string>& problem_type,
                                const std::vector<std::string>& id2label,
                                const std::vector<std::string>& architectures,
                                const std::string& model_type,
                                const std::optional<std::string>& torch_dtype,
                                const std::map<std::string, std::string>& extra) {
  for (const auto& [key, text] : extra) out[key] = Json::parse(text);
  if (problem_type) out["problem_type"] = *problem_type;
  out["model_type"] = model_type;
  if (!architectures.empty()) out["architectures"] = architectures;
  if (torch_dtype) out["torch_dtype"] = *torch_dtype;
  Json by_id = Json::object(), by_label = Json::object();
  for (size_t id = 0; id < id2label.size(); ++id) {
    by_id[std::to_string(id)] = id2label[id];
    by_label[id2label[id]] = id;
  }
  out["id2label"] = by_id;
  out["label2id"] = by_label;
}

}  // namespace kiln
