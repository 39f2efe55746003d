// RoBERTa and XLM-RoBERTa configuration: BertConfig's fields with transformers' RobertaConfig and
// XLMRobertaConfig defaults (pad_token_id 1; bos_token_id and eos_token_id stay in `extra`), read
// from and written to config.json so that transformers' AutoConfig accepts the result.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kiln/models/bert_config.h"

namespace kiln {

struct RobertaConfig : BertConfig {
  // RobertaConfig's defaults; model_type "xlm-roberta" gives XLMRobertaConfig's (vocab_size 30522).
  explicit RobertaConfig(std::string_view model_type = "roberta");

  std::unique_ptr<PretrainedConfig> clone() const override {
    return std::make_unique<RobertaConfig>(*this);
  }
};

// Parses config.json text with model_type "roberta" or "xlm-roberta" (the defaults follow it);
// errors read "[where] ..." naming the key. The result has passed roberta_config_check.
RobertaConfig roberta_config_parse(std::string_view json_text, std::string_view where);
RobertaConfig roberta_config_read(const std::string& path);

// bert_config_check's checks, model_type "roberta" or "xlm-roberta", and a pad_token_id: the
// position ids count from it, up to pad_token_id + seq, which must stay below
// max_position_embeddings.
void roberta_config_check(const RobertaConfig& config, std::string_view where);

// The config.json text (checked first), keys sorted as transformers writes them.
std::string roberta_config_to_json(const RobertaConfig& config);

}  // namespace kiln
