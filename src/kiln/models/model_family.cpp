// The families Kiln builds, by model_type, and config.json read through them.
#include "kiln/models/model_family.h"

#include <array>
#include <span>

#include "kiln/io/config_fields.h"
#include "kiln/io/json_util.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert_family.h"
#include "kiln/models/distilbert_family.h"
#include "kiln/models/electra_family.h"
#include "kiln/models/roberta_family.h"
#include "kiln/models/gpt2_family.h"

namespace kiln {
namespace {

// One line per family.
std::span<const ModelFamily* const> families() {
  static const auto all = std::to_array<const ModelFamily*>({
      &bert_family(),
      &distilbert_family(),
      &roberta_family(),
      &xlm_roberta_family(),
      &electra_family(),
      &gpt2_family(),
  });
  return all;
}

// How many of `values` differ from `ignored`, as f32.
Value count_unlike(Value values, double ignored) {
  return reduce_sum(cast(ne(values, scalar_like(values, ignored)), DType::f32));
}

}  // namespace

std::optional<ModelHead> architecture_head(std::string_view architecture) {
  static constexpr std::array<std::pair<std::string_view, ModelHead>, 6> kEndings = {{
      {"ForSequenceClassification", ModelHead::sequence_classification},
      {"ForQuestionAnswering", ModelHead::question_answering},
      {"ForMaskedLM", ModelHead::masked_lm},
      {"ForTokenClassification", ModelHead::token_classification},
      {"LMHeadModel", ModelHead::causal_lm},
      {"ForCausalLM", ModelHead::causal_lm},
  }};
  for (const auto& [ending, head] : kEndings) {
    if (architecture.ends_with(ending)) return head;
  }
  return std::nullopt;
}

ModelHead config_head(const PretrainedConfig& config, std::string_view where) {
  if (config.architectures.empty()) return ModelHead::sequence_classification;
  std::optional<ModelHead> head = architecture_head(config.architectures.front());
  check(head.has_value(), where, "\"architectures\" names ", config.architectures.front(),
        ", a model without a task head Kiln trains");
  return *head;
}

Value sequence_label_count(Value labels, Value attention_mask) {
  if (labels.dtype() != DType::f32) return count_unlike(labels, -100.0);
  Value first_tokens = slice(attention_mask, {0, 0}, {attention_mask.dim(0), 1});
  return count_unlike(first_tokens, 0.0);
}

Value span_label_count(Value start_positions, int64_t seq_len) {
  Value inside = lt(start_positions, scalar_like(start_positions, static_cast<double>(seq_len)));
  return reduce_sum(cast(inside, DType::f32));
}

Value token_label_count(Value labels) { return count_unlike(labels, -100.0); }

Value causal_lm_label_count(Value labels) {
  return count_unlike(slice(labels, {0, 1}, {labels.dim(0), labels.dim(1)}), -100.0);
}

Value causal_lm_predictions(Value logits) {
  // The largest of (vocab - 1 - index) among the maximal logits marks the first of them.
  const int64_t last = logits.dim(2) - 1;
  Value from_end = static_cast<double>(last) -
                   iota(logits.graph(), DType::i32, logits.shape(), 2);
  Value maximal = eq(logits, reduce_max(logits, {2}, /*keepdims=*/true));
  Value marks = reduce_max(select(maximal, from_end, scalar_like(from_end, -1.0)), {2});
  return static_cast<double>(last) - marks;
}

const ModelFamily& model_family(std::string_view model_type, std::string_view where) {
  for (const ModelFamily* family : families()) {
    if (family->model_type() == model_type) return *family;
  }
  std::string known;
  for (std::string_view type : model_types()) {
    known += (known.empty() ? "" : ", ") + std::string(type);
  }
  fail(where, "\"model_type\" is \"", model_type, "\"; Kiln builds ", known);
}

std::vector<std::string_view> model_types() {
  std::vector<std::string_view> types;
  for (const ModelFamily* family : families()) types.push_back(family->model_type());
  return types;
}

std::unique_ptr<PretrainedConfig> model_config_parse(std::string_view json_text,
                                                     std::string_view where) {
  const nlohmann::json object = json_parse(json_text, where);
  std::string model_type = "bert";
  if (object.is_object() && object.contains("model_type") && object["model_type"].is_string()) {
    model_type = object["model_type"].get<std::string>();
  }
  // The family's parser reports everything else (a config that is no object, a wrong type).
  return model_family(model_type, where).parse_config(json_text, where);
}

std::unique_ptr<PretrainedConfig> model_config_read(const std::string& path) {
  return model_config_parse(config_file_text(path), path);
}

}  // namespace kiln
