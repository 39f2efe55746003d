// DistilBERT configuration with transformers' DistilBertConfig field names and defaults: read
// (with the attribute_map aliases hidden_size, num_attention_heads, num_hidden_layers), checked,
// and written so that transformers loads the result.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/models/pretrained_config.h"

namespace kiln {

// DistilBertConfig's own fields; the labels, problem_type, architectures, model_type,
// torch_dtype and the uninterpreted keys are PretrainedConfig's.
struct DistilBertConfig : PretrainedConfig {
  DistilBertConfig() : PretrainedConfig("distilbert") {}

  int64_t vocab_size = 30522;
  int64_t max_position_embeddings = 512;
  // true: the position embeddings start as a sin/cos table (ParameterInit::sinusoidal) and
  // train, as in transformers 5 (transformers 4 froze them).
  bool sinusoidal_pos_embds = false;
  int64_t n_layers = 6;       // alias num_hidden_layers
  int64_t n_heads = 12;       // alias num_attention_heads
  int64_t dim = 768;          // alias hidden_size
  int64_t hidden_dim = 3072;  // the feed-forward width
  double dropout = 0.1;       // embeddings, feed-forward output, token-classification head
  double attention_dropout = 0.1;
  std::string activation = "gelu";  // of the feed-forward and masked-LM transform
  double initializer_range = 0.02;
  double qa_dropout = 0.1;
  double seq_classif_dropout = 0.2;
  std::optional<int64_t> pad_token_id = 0;
  // The masked-LM head's vocab_projector.weight is the word embeddings (PretrainedConfig's key).
  bool tie_word_embeddings = true;

  int64_t head_size() const { return dim / n_heads; }

  std::unique_ptr<PretrainedConfig> clone() const override {
    return std::make_unique<DistilBertConfig>(*this);
  }
  bool operator==(const DistilBertConfig&) const = default;
};

// Parses config.json text; errors read "[where] ..." naming the key. The result has passed
// distilbert_config_check.
DistilBertConfig distilbert_config_parse(std::string_view json_text, std::string_view where);
DistilBertConfig distilbert_config_read(const std::string& path);

// Throws "[where] ..." for what Kiln cannot build: dim not a multiple of the heads, non-positive
// sizes, dropouts outside [0, 1), an unsupported activation.
void distilbert_config_check(const DistilBertConfig& config, std::string_view where);

// The config.json text (checked first): keys sorted, two-space indent, as transformers writes it.
std::string distilbert_config_to_json(const DistilBertConfig& config);
// Writes it via `path.tmp`, fsync and rename.
void distilbert_config_write(const std::string& path, const DistilBertConfig& config);

}  // namespace kiln
