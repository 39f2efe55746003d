// BERT configuration with Hugging Face's config.json field names and defaults: read, checked, and
// written so that transformers.BertConfig.from_pretrained accepts the result.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/io/config_fields.h"
#include "kiln/models/pretrained_config.h"

namespace kiln {

// BertConfig's own fields; the labels, problem_type, architectures, model_type, torch_dtype and
// the uninterpreted keys are PretrainedConfig's.
struct BertConfig : PretrainedConfig {
  BertConfig() : PretrainedConfig("bert") {}

  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";  // gelu (erf), gelu_new / gelu_pytorch_tanh (tanh), relu
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double initializer_range = 0.02;
  double layer_norm_eps = 1e-12;
  std::optional<int64_t> pad_token_id = 0;
  std::string position_embedding_type = "absolute";  // the only one Kiln implements
  std::optional<double> classifier_dropout;          // null: heads use hidden_dropout_prob

  int64_t head_size() const { return hidden_size / num_attention_heads; }

  std::unique_ptr<PretrainedConfig> clone() const override {
    return std::make_unique<BertConfig>(*this);
  }
  bool operator==(const BertConfig&) const = default;
};

// Parses config.json text; errors read "[where] ..." naming the key (and line/column for bad JSON).
// The result has passed bert_config_check. A pure function of the text: the entry point for
// fuzzing.
BertConfig bert_config_parse(std::string_view json_text, std::string_view where);
BertConfig bert_config_read(const std::string& path);

// Throws "[where] ..." for what Kiln cannot build: hidden_size not a multiple of the heads,
// non-positive sizes, dropouts outside [0, 1), unsupported hidden_act or position_embedding_type.
void bert_config_check(const BertConfig& config, std::string_view where);

// The config.json text (checked first): keys sorted, two-space indent, as transformers writes it.
std::string bert_config_to_json(const BertConfig& config);

// For the families whose config.json holds BertConfig's keys with other defaults and a few keys
// of their own (RoBERTa, ELECTRA): reads BertConfig's own keys (not the common ones) into
// `config`, leaving absent ones at the family's defaults; checks what bert_config_check does but
// model_type, with the family's own keys allowed besides; writes BertConfig's keys and the common
// ones into `out`.
void bert_config_read_fields(ConfigFields& fields, BertConfig& config);
void bert_config_check_fields(const BertConfig& config,
                              const std::set<std::string_view>& family_keys,
                              std::string_view where);
void bert_config_write_fields(nlohmann::json& out, const BertConfig& config);
// Writes it via `path.tmp`, fsync and rename.
void bert_config_write(const std::string& path, const BertConfig& config);

// The sizes of ../shared/bench/peer/bert_torch.py: tiny, mini, small, medium, base, large.
BertConfig bert_config_preset(std::string_view name);

}  // namespace kiln
