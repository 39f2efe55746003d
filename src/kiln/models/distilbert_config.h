// DistilBERT configuration with transformers' DistilBertConfig field names and defaults: read
// (with the attribute_map aliases hidden_size, num_attention_heads, num_hidden_layers), checked,
// and written so that transformers loads the result.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct DistilBertConfig {
  int64_t vocab_size = 30522;
  int64_t max_position_embeddings = 512;
  // true: fixed sin/cos position embeddings; Kiln refuses it (see distilbert_config_check).
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
  // The fields every family's config shares, as BertConfig has them.
  std::optional<std::string> problem_type;
  std::vector<std::string> id2label = {"LABEL_0", "LABEL_1"};
  std::vector<std::string> architectures;
  std::string model_type = "distilbert";
  std::optional<std::string> torch_dtype;
  std::map<std::string, std::string> extra;

  int64_t num_labels() const { return static_cast<int64_t>(id2label.size()); }
  int64_t head_size() const { return dim / n_heads; }
  // Replaces id2label by LABEL_0 .. LABEL_{n-1}, as transformers does for num_labels=n.
  void set_num_labels(int64_t count);

  bool operator==(const DistilBertConfig&) const = default;
};

// Parses config.json text; errors read "[where] ..." naming the key. The result has passed
// distilbert_config_check.
DistilBertConfig distilbert_config_parse(std::string_view json_text, std::string_view where);
DistilBertConfig distilbert_config_read(const std::string& path);

// Throws "[where] ..." for what Kiln cannot build: dim not a multiple of the heads, non-positive
// sizes, dropouts outside [0, 1), an unsupported activation, sinusoidal_pos_embds.
void distilbert_config_check(const DistilBertConfig& config, std::string_view where);

// The config.json text (checked first): keys sorted, two-space indent, as transformers writes it.
std::string distilbert_config_to_json(const DistilBertConfig& config);
// Writes it via `path.tmp`, fsync and rename.
void distilbert_config_write(const std::string& path, const DistilBertConfig& config);

}  // namespace kiln
