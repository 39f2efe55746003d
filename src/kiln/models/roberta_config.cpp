// RobertaConfig: BertConfig's parsing, checks and writing with RoBERTa's defaults and model types.
#include "kiln/models/roberta_config.h"

#include "kiln/io/json_util.h"
#include "kiln/ir/error.h"

namespace kiln {

RobertaConfig::RobertaConfig(std::string_view model_type) {
  this->model_type = std::string(model_type);
  vocab_size = model_type == "xlm-roberta" ? 30522 : 50265;
  pad_token_id = 1;
}

RobertaConfig roberta_config_parse(std::string_view json_text, std::string_view where) {
  // The defaults depend on the model type, so it is read first.
  nlohmann::json object = json_parse(json_text, where);
  std::string model_type = "roberta";
  if (object.is_object() && object.contains("model_type") && object["model_type"].is_string()) {
    model_type = object["model_type"].get<std::string>();
  }
  RobertaConfig config(model_type);
  static_cast<BertConfig&>(config) = bert_config_parse_over(json_text, where, config);
  roberta_config_check(config, where);
  return config;
}

RobertaConfig roberta_config_read(const std::string& path) {
  return roberta_config_parse(config_file_text(path), path);
}

void roberta_config_check(const RobertaConfig& config, std::string_view where) {
  check(config.model_type == "roberta" || config.model_type == "xlm-roberta", where,
        "\"model_type\" is \"", config.model_type, "\", not \"roberta\" or \"xlm-roberta\"");
  bert_config_check_fields(config, where);
  check(config.pad_token_id.has_value(), where,
        "\"pad_token_id\" is null; RoBERTa's position ids count from it");
  check(*config.pad_token_id + 1 < config.max_position_embeddings, where, "\"pad_token_id\" ",
        *config.pad_token_id, " leaves no position below \"max_position_embeddings\" ",
        config.max_position_embeddings);
}

std::string roberta_config_to_json(const RobertaConfig& config) {
  roberta_config_check(config, "RobertaConfig");
  return bert_config_fields_to_json(config);
}

}  // namespace kiln
