// ElectraConfig: BertConfig's fields, checks and writing with ELECTRA's defaults and
// embedding_size.
#include "kiln/models/electra_config.h"

#include "kiln/io/config_fields.h"
#include "kiln/ir/error.h"

namespace kiln {

ElectraConfig::ElectraConfig() {
  model_type = "electra";
  hidden_size = 256;
  num_attention_heads = 4;
  intermediate_size = 1024;
}

ElectraConfig electra_config_parse(std::string_view json_text, std::string_view where) {
  ConfigFields fields(json_text, where);
  ElectraConfig config;
  fields.integer("embedding_size", config.embedding_size);
  bert_config_read_fields(fields, config);
  config_read_common(fields, config);
  electra_config_check(config, where);
  return config;
}

ElectraConfig electra_config_read(const std::string& path) {
  return electra_config_parse(config_file_text(path), path);
}

void electra_config_check(const ElectraConfig& config, std::string_view where) {
  config_check_model_type(where, config.model_type, "electra");
  bert_config_check_fields(config, {"embedding_size"}, where);
  config_check_positive(where, "embedding_size", config.embedding_size);
}

std::string electra_config_to_json(const ElectraConfig& config) {
  electra_config_check(config, "ElectraConfig");
  nlohmann::json out = nlohmann::json::object();
  bert_config_write_fields(out, config);
  out["embedding_size"] = config.embedding_size;
  return out.dump(2) + "\n";
}

}  // namespace kiln
