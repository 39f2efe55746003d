// Gpt2Config: config.json reading (common fields, unknown keys kept), checks and writing.
#include "kiln/models/gpt2_config.h"

#include <set>

#include "kiln/io/atomic_file.h"
#include "kiln/io/config_fields.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

// The keys Gpt2Config reads besides the common ones; every other key lands in `extra`.
const std::set<std::string_view> kGpt2Keys = {
    "vocab_size", "n_positions", "n_embd", "n_layer", "n_head", "n_inner",
    "activation_function", "resid_pdrop", "embd_pdrop", "attn_pdrop", "layer_norm_epsilon",
    "initializer_range", "scale_attn_weights", "scale_attn_by_inverse_layer_idx",
    "reorder_and_upcast_attn", "add_cross_attention", "tie_word_embeddings", "bos_token_id",
    "eos_token_id", "pad_token_id", "classifier_dropout", "hidden_dropout"};

Json optional_json(const auto& value) { return value ? Json(*value) : Json(nullptr); }

}  // namespace

Gpt2Config gpt2_config_parse(std::string_view json_text, std::string_view where) {
  ConfigFields fields(json_text, where);
  Gpt2Config config;
  fields.integer("vocab_size", config.vocab_size);
  fields.integer("n_positions", config.n_positions);
  fields.integer("n_embd", config.n_embd);
  fields.integer("n_layer", config.n_layer);
  fields.integer("n_head", config.n_head);
  fields.integer("n_inner", config.n_inner);
  fields.string("activation_function", config.activation_function);
  fields.number("resid_pdrop", config.resid_pdrop);
  fields.number("embd_pdrop", config.embd_pdrop);
  fields.number("attn_pdrop", config.attn_pdrop);
  fields.number("layer_norm_epsilon", config.layer_norm_epsilon);
  fields.number("initializer_range", config.initializer_range);
  fields.boolean("scale_attn_weights", config.scale_attn_weights);
  fields.boolean("scale_attn_by_inverse_layer_idx", config.scale_attn_by_inverse_layer_idx);
  fields.boolean("reorder_and_upcast_attn", config.reorder_and_upcast_attn);
  fields.boolean("add_cross_attention", config.add_cross_attention);
  fields.boolean("tie_word_embeddings", config.tie_word_embeddings);
  fields.integer("bos_token_id", config.bos_token_id);
  fields.integer("eos_token_id", config.eos_token_id);
  fields.integer("pad_token_id", config.pad_token_id);
  fields.number("classifier_dropout", config.classifier_dropout);
  fields.number("hidden_dropout", config.hidden_dropout);
  config_read_common(fields, config);
  gpt2_config_check(config, where);
  return config;
}

Gpt2Config gpt2_config_read(const std::string& path) {
  return gpt2_config_parse(config_file_text(path), path);
}

void gpt2_config_check(const Gpt2Config& config, std::string_view where) {
  config_check_model_type(where, config.model_type, "gpt2");
  config_check_positive(where, "vocab_size", config.vocab_size);
  config_check_positive(where, "n_positions", config.n_positions);
  config_check_positive(where, "n_embd", config.n_embd);
  config_check_positive(where, "n_layer", config.n_layer);
  config_check_positive(where, "n_head", config.n_head);
  if (config.n_inner) config_check_positive(where, "n_inner", *config.n_inner);
  check(config.n_embd % config.n_head == 0, where, "n_embd ", config.n_embd,
        " is not a multiple of n_head ", config.n_head);
  config_check_activation(where, "activation_function", config.activation_function);
  config_check_probability(where, "resid_pdrop", config.resid_pdrop);
  config_check_probability(where, "embd_pdrop", config.embd_pdrop);
  config_check_probability(where, "attn_pdrop", config.attn_pdrop);
  if (config.classifier_dropout)
    config_check_probability(where, "classifier_dropout", *config.classifier_dropout);
  if (config.hidden_dropout)
    config_check_probability(where, "hidden_dropout", *config.hidden_dropout);
  check(config.layer_norm_epsilon > 0.0, where, "\"layer_norm_epsilon\" must be positive, got ",
        config.layer_norm_epsilon);
  check(config.initializer_range >= 0.0, where, "\"initializer_range\" must not be negative, got ",
        config.initializer_range);
  check(config.scale_attn_weights, where,
        "\"scale_attn_weights\" false is not supported (Kiln scales by 1/sqrt(head size))");
  check(!config.scale_attn_by_inverse_layer_idx, where,
        "\"scale_attn_by_inverse_layer_idx\" true is not supported");
  check(!config.reorder_and_upcast_attn, where,
        "\"reorder_and_upcast_attn\" true is not supported");
  check(!config.add_cross_attention, where,
        "\"add_cross_attention\" true is not supported (Kiln builds GPT-2 as a decoder alone)");
  if (config.pad_token_id) {
    check(*config.pad_token_id >= 0 && *config.pad_token_id < config.vocab_size, where,
          "\"pad_token_id\" ", *config.pad_token_id, " is outside the vocabulary [0, ",
          config.vocab_size, ")");
  }
  config_check_common(config, kGpt2Keys, where);
}

std::string gpt2_config_to_json(const Gpt2Config& config) {
  gpt2_config_check(config, "Gpt2Config");
  Json out = Json::object();
  config_write_common(out, config);
  out["vocab_size"] = config.vocab_size;
  out["n_positions"] = config.n_positions;
  out["n_embd"] = config.n_embd;
  out["n_layer"] = config.n_layer;
  out["n_head"] = config.n_head;
  out["n_inner"] = optional_json(config.n_inner);
  out["activation_function"] = config.activation_function;
  out["resid_pdrop"] = config.resid_pdrop;
  out["embd_pdrop"] = config.embd_pdrop;
  out["attn_pdrop"] = config.attn_pdrop;
  out["layer_norm_epsilon"] = config.layer_norm_epsilon;
  out["initializer_range"] = config.initializer_range;
  out["scale_attn_weights"] = config.scale_attn_weights;
  out["scale_attn_by_inverse_layer_idx"] = config.scale_attn_by_inverse_layer_idx;
  out["reorder_and_upcast_attn"] = config.reorder_and_upcast_attn;
  out["add_cross_attention"] = config.add_cross_attention;
  out["tie_word_embeddings"] = config.tie_word_embeddings;
  out["bos_token_id"] = optional_json(config.bos_token_id);
  out["eos_token_id"] = optional_json(config.eos_token_id);
  out["pad_token_id"] = optional_json(config.pad_token_id);
  if (config.classifier_dropout) out["classifier_dropout"] = *config.classifier_dropout;
  if (config.hidden_dropout) out["hidden_dropout"] = *config.hidden_dropout;
  return out.dump(2) + "\n";
}

void gpt2_config_write(const std::string& path, const Gpt2Config& config) {
  write_file_atomically(path, gpt2_config_to_json(config));
}

}  // namespace kiln
