// RobertaConfig: BertConfig's fields, checks and writing with RoBERTa's defaults and model types.
#include "kiln/models/roberta_config.h"

#include "kiln/io/config_fields.h"
#include "kiln/ir/error.h"

namespace kiln {

RobertaConfig::RobertaConfig(std::string_view model_type) {
  this->model_type = std::string(model_type);
  vocab_size = model_type == "xlm-roberta" ? 30522 : 50265;
  pad_token_id = 1;
}

RobertaConfig roberta_config_parse(std::string_view json_text, std::string_view where) {
  ConfigFields fields(json_text, where);
  // The defaults depend on the model type, so it is read first.
  std::string model_type = "roberta";
  fields.string("model_type", model_type);
  RobertaConfig config(model_type);
  bert_config_read_fields(fields, config);
  config_read_common(fields, config);
  roberta_config_check(config, where);
  return config;
}

RobertaConfig roberta_config_read(const std::string& path) {
  return roberta_config_parse(config_file_text(path), path);
}

void roberta_config_check(const RobertaConfig& config, std::string_view where) {
  check(config.model_type == "roberta" || config.model_type == "xlm-roberta", where,
        "\"model_type\" is \"", config.model_type, "\", not \"roberta\" or \"xlm-roberta\"");
  bert_config_check_fields(config, {}, where);
  check(config.pad_token_id.has_value(), where,
        "\"pad_token_id\" is null; RoBERTa's position ids count from it");
  check(*config.pad_token_id + 1 < config.max_position_embeddings, where, "\"pad_token_id\" ",
        *config.pad_token_id, " leaves no position below \"max_position_embeddings\" ",
        config.max_position_embeddings);
}

std::string roberta_config_to_json(const RobertaConfig& config) {
  roberta_config_check(config, "RobertaConfig");
  nlohmann::json out = nlohmann::json::object();
  bert_config_write_fields(out, config);
  return out.dump(2) + "\n";
}

}  // namespace kiln
