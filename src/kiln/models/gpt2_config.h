// GPT-2 configuration with transformers' GPT2Config field names and defaults: read, checked, and
// written so that transformers loads the result.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/models/pretrained_config.h"

namespace kiln {

// Gpt2Config's own fields; the labels, problem_type, architectures, model_type, torch_dtype and
// the uninterpreted keys are PretrainedConfig's.
struct Gpt2Config : PretrainedConfig {
  Gpt2Config() : PretrainedConfig("gpt2") {}

  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;  // the longest sequence (wpe's rows)
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  std::optional<int64_t> n_inner;  // the MLP's width; null: 4 * n_embd
  std::string activation_function = "gelu_new";
  double resid_pdrop = 0.1;  // after the attention and MLP projections
  double embd_pdrop = 0.1;   // after the embeddings
  double attn_pdrop = 0.1;   // on the attention probabilities
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
  // Attention variants: Kiln builds the defaults and refuses the others (gpt2_config_check).
  bool scale_attn_weights = true;
  bool scale_attn_by_inverse_layer_idx = false;
  bool reorder_and_upcast_attn = false;
  bool add_cross_attention = false;
  // The LM head's weight is wte's (false: lm_head.weight is a parameter of its own).
  bool tie_word_embeddings = true;
  std::optional<int64_t> bos_token_id = 50256;
  std::optional<int64_t> eos_token_id = 50256;
  // Sequence classification pools the last token that is not pad_token_id; null: the last.
  std::optional<int64_t> pad_token_id;
  // The token-classification head's dropout: classifier_dropout, else hidden_dropout, else 0.1.
  std::optional<double> classifier_dropout;
  std::optional<double> hidden_dropout;

  int64_t head_size() const { return n_embd / n_head; }
  int64_t inner_size() const { return n_inner.value_or(4 * n_embd); }

  std::unique_ptr<PretrainedConfig> clone() const override {
    return std::make_unique<Gpt2Config>(*this);
  }
  bool operator==(const Gpt2Config&) const = default;
};

// Parses config.json text; errors read "[where] ..." naming the key. The result has passed
// gpt2_config_check.
Gpt2Config gpt2_config_parse(std::string_view json_text, std::string_view where);
Gpt2Config gpt2_config_read(const std::string& path);

// Throws "[where] ..." for what Kiln cannot build: n_embd not a multiple of n_head, non-positive
// sizes, dropouts outside [0, 1), an unsupported activation_function, and the attention variants
// other than GPT-2's (scale_attn_weights false, scale_attn_by_inverse_layer_idx,
// reorder_and_upcast_attn, add_cross_attention), each named.
void gpt2_config_check(const Gpt2Config& config, std::string_view where);

// The config.json text (checked first): keys sorted, two-space indent, as transformers writes it.
std::string gpt2_config_to_json(const Gpt2Config& config);
// Writes it via `path.tmp`, fsync and rename.
void gpt2_config_write(const std::string& path, const Gpt2Config& config);

}  // namespace kiln
