// ELECTRA configuration: BertConfig's fields plus embedding_size (the width of the embeddings,
// projected to hidden_size when they differ), with transformers' ElectraConfig defaults; read from
// and written to config.json so that transformers' AutoConfig accepts the result. The
// sequence-summary keys (summary_type, ...) of the multiple-choice head stay in `extra`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kiln/models/bert_config.h"

namespace kiln {

struct ElectraConfig : BertConfig {
  ElectraConfig();

  int64_t embedding_size = 128;

  std::unique_ptr<PretrainedConfig> clone() const override {
    return std::make_unique<ElectraConfig>(*this);
  }

  bool operator==(const ElectraConfig&) const = default;
};

// Parses config.json text (model_type "electra"); errors read "[where] ..." naming the key. The
// result has passed electra_config_check.
ElectraConfig electra_config_parse(std::string_view json_text, std::string_view where);
ElectraConfig electra_config_read(const std::string& path);

// bert_config_check's checks, model_type "electra" and a positive embedding_size.
void electra_config_check(const ElectraConfig& config, std::string_view where);

// The config.json text (checked first), keys sorted as transformers writes them.
std::string electra_config_to_json(const ElectraConfig& config);

}  // namespace kiln
