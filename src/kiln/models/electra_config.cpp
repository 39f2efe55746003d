// ElectraConfig: BertConfig's parsing, checks and writing with ELECTRA's defaults and
// embedding_size.
#include "kiln/models/electra_config.h"

#include "kiln/io/json_util.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

constexpr const char* kEmbeddingSize = "embedding_size";

}  // namespace

ElectraConfig::ElectraConfig() {
  model_type = "electra";
  hidden_size = 256;
  num_attention_heads = 4;
  intermediate_size = 1024;
}

ElectraConfig electra_config_parse(std::string_view json_text, std::string_view where) {
  ElectraConfig config;
  static_cast<BertConfig&>(config) = bert_config_parse_over(json_text, where, config);
  // BertConfig leaves embedding_size among the keys it does not interpret.
  if (auto found = config.extra.find(kEmbeddingSize); found != config.extra.end()) {
    nlohmann::json value = nlohmann::json::parse(found->second);
    check(value.is_number_integer(), where, "\"", kEmbeddingSize, "\" must be an integer, got ",
          found->second);
    config.embedding_size = value.get<int64_t>();
    config.extra.erase(found);
  }
  electra_config_check(config, where);
  return config;
}

ElectraConfig electra_config_read(const std::string& path) {
  return electra_config_parse(config_file_text(path), path);
}

void electra_config_check(const ElectraConfig& config, std::string_view where) {
  check(config.model_type == "electra", where, "\"model_type\" is \"", config.model_type,
        "\", not \"electra\"");
  check(!config.extra.contains(kEmbeddingSize), where, "extra key \"", kEmbeddingSize,
        "\" is an ElectraConfig field");
  bert_config_check_fields(config, where);
  check(config.embedding_size > 0, where, "\"", kEmbeddingSize, "\" must be positive, got ",
        config.embedding_size);
}

std::string electra_config_to_json(const ElectraConfig& config) {
  electra_config_check(config, "ElectraConfig");
  BertConfig fields = config;
  fields.extra[kEmbeddingSize] = std::to_string(config.embedding_size);
  return bert_config_fields_to_json(fields);
}

}  // namespace kiln
