// What every model family's config.json shares with transformers' PretrainedConfig: typed access
// to the top-level keys, and the common fields (id2label with label2id and num_labels,
// problem_type, architectures, model_type, torch_dtype, unknown keys kept as `extra`) read,
// checked and written alike for each family's config struct, which names them as BertConfig does.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/io/json_util.h"

namespace kiln {

// Typed access to the keys of a config.json object; each key read is consumed, so that the keys
// never read are the config's `extra`. Errors read "[where] ..." naming the key.
class ConfigFields {
 public:
  using Json = nlohmann::json;

  // Parses config.json text (line and column in the error for bad JSON); not an object fails.
  ConfigFields(std::string_view json_text, std::string_view where);

  // Absent keys leave `out` as it is (the default); null is accepted only for optionals.
  void integer(const char* key, int64_t& out);
  void integer(const char* key, std::optional<int64_t>& out);
  void number(const char* key, double& out);
  void number(const char* key, std::optional<double>& out);
  void string(const char* key, std::string& out);
  void string(const char* key, std::optional<std::string>& out);
  void boolean(const char* key, bool& out);

  // The value, or nullptr when absent; the key no longer counts as unknown.
  const Json* take(const char* key);
  // The keys not taken, as JSON text.
  std::map<std::string, std::string> unknown() const;

  int64_t as_integer(std::string_view key, const Json& value) const;
  double as_number(std::string_view key, const Json& value) const;
  std::string as_string(std::string_view key, const Json& value) const;
  [[noreturn]] void wrong(std::string_view key, const Json& value, const char* expected) const;

  std::string_view where() const { return where_; }

 private:
  Json object_;
  std::string_view where_;
  std::set<std::string> taken_;
};

// The text of a config.json file; errors name the path.
std::string config_file_text(const std::string& path);

// LABEL_0 .. LABEL_{count-1}, as transformers names the classes of num_labels=count.
std::vector<std::string> config_default_labels(int64_t count);

// id2label, label2id and num_labels together, with transformers' precedence (id2label first);
// `id2label` keeps its value when none is given.
void config_read_labels(ConfigFields& fields, std::vector<std::string>& id2label);
void config_read_architectures(ConfigFields& fields, std::vector<std::string>& architectures);
// transformers 4 writes "torch_dtype", transformers 5 writes "dtype"; both mean the same.
void config_read_torch_dtype(ConfigFields& fields, std::optional<std::string>& torch_dtype);

// "[where] ..." checks of a family's fields: model_type is the family's, a size positive, a
// dropout in [0, 1), initializer_range not negative, a token id (unset, or in the vocabulary).
void config_check_model_type(std::string_view where, const std::string& model_type,
                             std::string_view family);
void config_check_positive(std::string_view where, const char* key, int64_t value);
void config_check_probability(std::string_view where, const char* key, double value);
void config_check_initializer_range(std::string_view where, double value);
void config_check_token_id(std::string_view where, const char* key,
                           const std::optional<int64_t>& id, int64_t vocab_size);
// An activation name that nn/activation.h implements: gelu, gelu_new, gelu_pytorch_tanh, relu.
void config_check_activation(std::string_view where, const char* key, const std::string& name);

// The keys config_read_common reads: problem_type, model_type, the label keys, architectures,
// torch_dtype and dtype.
const std::set<std::string_view>& config_common_keys();

// Reads the common fields; call after the family's own keys, since `extra` takes every key still
// unread.
template <typename Config>
void config_read_common(ConfigFields& fields, Config& config) {
  fields.string("problem_type", config.problem_type);
  fields.string("model_type", config.model_type);
  config_read_labels(fields, config.id2label);
  config_read_architectures(fields, config.architectures);
  config_read_torch_dtype(fields, config.torch_dtype);
  config.extra = fields.unknown();
}

// Checks problem_type (unset or one of HF's three), id2label (not empty, no name twice) and the
// extra keys (valid JSON, neither a common key nor one of `family_keys`, the keys the family
// reads).
void config_check_common_fields(const std::optional<std::string>& problem_type,
                                const std::vector<std::string>& id2label,
                                const std::map<std::string, std::string>& extra,
                                const std::set<std::string_view>& family_keys,
                                std::string_view where);
template <typename Config>
void config_check_common(const Config& config, const std::set<std::string_view>& family_keys,
                         std::string_view where) {
  config_check_common_fields(config.problem_type, config.id2label, config.extra, family_keys,
                             where);
}

// Writes the extra keys and the common fields (id2label with label2id) into `out`.
void config_write_common_fields(nlohmann::json& out, const std::optional<std::string>& problem_type,
                                const std::vector<std::string>& id2label,
                                const std::vector<std::string>& architectures,
                                const std::string& model_type,
                                const std::optional<std::string>& torch_dtype,
                                const std::map<std::string, std::string>& extra);
template <typename Config>
void config_write_common(nlohmann::json& out, const Config& config) {
  config_write_common_fields(out, config.problem_type, config.id2label, config.architectures,
                             config.model_type, config.torch_dtype, config.extra);
}

}  // namespace kiln
