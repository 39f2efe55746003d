// BERT configuration with Hugging Face's config.json field names and defaults: read, checked, and
// written so that transformers.BertConfig.from_pretrained accepts the result.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/io/config_fields.h"

namespace kiln {

struct BertConfig {
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
  // null, "regression", "single_label_classification" or "multi_label_classification".
  std::optional<std::string> problem_type;
  // Class names by id; num_labels is its size. config.json stores it as {"0": name, ...} and
  // its inverse as label2id. Hugging Face's default is two classes, LABEL_0 and LABEL_1.
  std::vector<std::string> id2label = {"LABEL_0", "LABEL_1"};
  std::vector<std::string> architectures;  // e.g. {"BertForSequenceClassification"}
  std::string model_type = "bert";
  std::optional<std::string> torch_dtype;  // "float32", "bfloat16", ... ("dtype" in transformers 5)
  // Keys Kiln does not interpret (use_cache, transformers_version, ...) as JSON text, written
  // back unchanged: rewriting a config loses nothing.
  std::map<std::string, std::string> extra;

  int64_t num_labels() const { return static_cast<int64_t>(id2label.size()); }
  int64_t head_size() const { return hidden_size / num_attention_heads; }
  // Replaces id2label by LABEL_0 .. LABEL_{n-1}, as transformers does for num_labels=n.
  void set_num_labels(int64_t count);

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
