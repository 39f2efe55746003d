// DistilBertConfig: config.json reading (attribute_map aliases, common fields, unknown keys
// kept), checks and writing.
#include "kiln/models/distilbert_config.h"

#include <set>

#include "kiln/io/atomic_file.h"
#include "kiln/io/config_fields.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

// The keys DistilBertConfig reads besides the common ones; every other key lands in `extra`.
const std::set<std::string_view> kDistilBertKeys = {
    "vocab_size", "max_position_embeddings", "sinusoidal_pos_embds", "n_layers", "n_heads", "dim",
    "hidden_dim", "dropout", "attention_dropout", "activation", "initializer_range", "qa_dropout",
    "seq_classif_dropout", "pad_token_id", "tie_word_embeddings", "hidden_size",
    "num_attention_heads", "num_hidden_layers"};

// transformers' attribute_map: a config.json key `alias` sets `key` (the alias wins, as it is
// set last in PretrainedConfig.__init__); both with different values is refused here.
void integer_with_alias(ConfigFields& fields, const char* key, const char* alias, int64_t& out) {
  fields.integer(key, out);
  if (const Json* value = fields.take(alias)) {
    int64_t aliased = fields.as_integer(alias, *value);
    if (fields.take(key) && aliased != out) {
      fail(fields.where(), '"', alias, "\" is ", aliased, " but \"", key, "\" is ", out,
           " (transformers reads them as one field)");
    }
    out = aliased;
  }
}

}  // namespace

DistilBertConfig distilbert_config_parse(std::string_view json_text, std::string_view where) {
  ConfigFields fields(json_text, where);
  DistilBertConfig config;
  fields.integer("vocab_size", config.vocab_size);
  fields.integer("max_position_embeddings", config.max_position_embeddings);
  fields.boolean("sinusoidal_pos_embds", config.sinusoidal_pos_embds);
  integer_with_alias(fields, "n_layers", "num_hidden_layers", config.n_layers);
  integer_with_alias(fields, "n_heads", "num_attention_heads", config.n_heads);
  integer_with_alias(fields, "dim", "hidden_size", config.dim);
  fields.integer("hidden_dim", config.hidden_dim);
  fields.number("dropout", config.dropout);
  fields.number("attention_dropout", config.attention_dropout);
  fields.string("activation", config.activation);
  fields.number("initializer_range", config.initializer_range);
  fields.number("qa_dropout", config.qa_dropout);
  fields.number("seq_classif_dropout", config.seq_classif_dropout);
  fields.integer("pad_token_id", config.pad_token_id);
  fields.boolean("tie_word_embeddings", config.tie_word_embeddings);
  config_read_common(fields, config);
  distilbert_config_check(config, where);
  return config;
}

DistilBertConfig distilbert_config_read(const std::string& path) {
  return distilbert_config_parse(config_file_text(path), path);
}

void distilbert_config_check(const DistilBertConfig& config, std::string_view where) {
  config_check_model_type(where, config.model_type, "distilbert");
  config_check_positive(where, "vocab_size", config.vocab_size);
  config_check_positive(where, "max_position_embeddings", config.max_position_embeddings);
  config_check_positive(where, "n_layers", config.n_layers);
  config_check_positive(where, "n_heads", config.n_heads);
  config_check_positive(where, "dim", config.dim);
  config_check_positive(where, "hidden_dim", config.hidden_dim);
  check(config.dim % config.n_heads == 0, where, "dim ", config.dim,
        " is not a multiple of n_heads ", config.n_heads);
  config_check_activation(where, "activation", config.activation);
  config_check_probability(where, "dropout", config.dropout);
  config_check_probability(where, "attention_dropout", config.attention_dropout);
  config_check_probability(where, "qa_dropout", config.qa_dropout);
  config_check_probability(where, "seq_classif_dropout", config.seq_classif_dropout);
  config_check_initializer_range(where, config.initializer_range);
  config_check_token_id(where, "pad_token_id", config.pad_token_id, config.vocab_size);
  config_check_common(config, kDistilBertKeys, where);
}

std::string distilbert_config_to_json(const DistilBertConfig& config) {
  distilbert_config_check(config, "DistilBertConfig");
  Json out = Json::object();
  config_write_common(out, config);
  out["vocab_size"] = config.vocab_size;
  out["max_position_embeddings"] = config.max_position_embeddings;
  out["sinusoidal_pos_embds"] = config.sinusoidal_pos_embds;
  out["n_layers"] = config.n_layers;
  out["n_heads"] = config.n_heads;
  out["dim"] = config.dim;
  out["hidden_dim"] = config.hidden_dim;
  out["dropout"] = config.dropout;
  out["attention_dropout"] = config.attention_dropout;
  out["activation"] = config.activation;
  out["initializer_range"] = config.initializer_range;
  out["qa_dropout"] = config.qa_dropout;
  out["seq_classif_dropout"] = config.seq_classif_dropout;
  out["pad_token_id"] = config.pad_token_id ? Json(*config.pad_token_id) : Json(nullptr);
  out["tie_word_embeddings"] = config.tie_word_embeddings;
  return out.dump(2) + "\n";
}

void distilbert_config_write(const std::string& path, const DistilBertConfig& config) {
  write_file_atomically(path, distilbert_config_to_json(config));
}

}  // namespace kiln
