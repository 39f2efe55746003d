// The ModelFamily of an encoder whose heads are free functions of its config, as BERT's,
// DistilBERT's, RoBERTa's (and XLM-RoBERTa's) and ELECTRA's are: each adapter is one
// EncoderParts value naming its config parser, its four heads' builders and its checkpoint
// functions, so that the switch over heads and the loss counts are written once. Included by the
// *_family.cpp files only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/error.h"
#include "kiln/models/model_family.h"

namespace kiln {

// What an encoder family is made of. Head builders take (graph, config, options) and return a
// struct with `params` and `loss`, and: `logits`, `labels` and `inputs.attention_mask`
// (sequence classification); `start_logits`, `end_logits` and `start_positions` (question
// answering); `logits` and `labels` (token classification); `labels` (masked LM).
// Spelled out in full where built: clang 14 (the fuzz build's) deduces no aggregate's arguments.
template <typename Config, typename Classifier, typename Answerer, typename Tagger,
          typename Filler>
struct EncoderParts {
  std::string_view model_type;    // config.json's: "distilbert"
  std::string_view class_prefix;  // of transformers' classes: "DistilBert", "XLMRoberta"
  Config (*parse_config)(std::string_view json_text, std::string_view where);
  Classifier (*sequence_classification)(Graph&, const Config&, const ModelBuildOptions&);
  Answerer (*question_answering)(Graph&, const Config&, const ModelBuildOptions&);
  Tagger (*token_classification)(Graph&, const Config&, const ModelBuildOptions&);
  Filler (*masked_lm)(Graph&, const Config&, const ModelBuildOptions&);
  LoadReport (*load_weights)(ParameterSet& params, const std::string& path, bool strict);
  void (*save_pretrained)(const std::string& folder, Config config, const ParameterSet& params);
  bool takes_token_type_ids;
  // The longest sequence the position embeddings allow.
  int64_t (*max_positions)(const Config& config);
  std::string_view wordpiece_tokenizer_class = {};  // see ModelFamily
};

// EncoderParts::max_positions of the families whose position ids start at 0.
template <typename Config>
int64_t max_position_embeddings(const Config& config) {
  return config.max_position_embeddings;
}

// An Error naming `model_type`: the encoder families have no causal LM head.
[[noreturn]] void encoder_missing_head(std::string_view model_type);
// class_prefix + the head's ending ("RobertaForQuestionAnswering"); encoder_missing_head for
// causal LM.
std::string encoder_architecture(std::string_view model_type, std::string_view class_prefix,
                                 ModelHead head);

template <typename Config, typename... Heads>
class EncoderFamily final : public ModelFamily {
 public:
  explicit EncoderFamily(EncoderParts<Config, Heads...> parts) : parts_(parts) {}

  std::string_view model_type() const override { return parts_.model_type; }

  std::unique_ptr<PretrainedConfig> parse_config(std::string_view json_text,
                                                 std::string_view where) const override {
    return std::make_unique<Config>(parts_.parse_config(json_text, where));
  }

  std::string architecture(ModelHead head) const override {
    return encoder_architecture(parts_.model_type, parts_.class_prefix, head);
  }

  TaskModel build(ModelHead head, Graph& graph, const PretrainedConfig& config,
                  const ModelBuildOptions& options) const override {
    const Config& own = config_of(config);
    const bool labels = options.with_labels;
    switch (head) {
      case ModelHead::sequence_classification: {
        auto model = parts_.sequence_classification(graph, own, options);
        return task_model(model, {model.logits},
                          labels ? sequence_label_count(model.labels, model.inputs.attention_mask)
                                 : Value());
      }
      case ModelHead::question_answering: {
        auto model = parts_.question_answering(graph, own, options);
        return task_model(
            model, {model.start_logits, model.end_logits},
            labels ? span_label_count(model.start_positions, options.seq_len) : Value());
      }
      case ModelHead::token_classification: {
        auto model = parts_.token_classification(graph, own, options);
        return task_model(model, {model.logits},
                          labels ? token_label_count(model.labels) : Value());
      }
      case ModelHead::masked_lm: {
        auto model = parts_.masked_lm(graph, own, options);
        return task_model(model, {}, labels ? token_label_count(model.labels) : Value());
      }
      case ModelHead::causal_lm:
        break;
    }
    encoder_missing_head(parts_.model_type);
  }

  ParameterSet parameters(ModelHead head, Graph& graph,
                          const PretrainedConfig& config) const override {
    const Config& own = config_of(config);
    ModelBuildOptions options;
    options.seq_len = 1;
    options.with_labels = false;
    switch (head) {
      case ModelHead::sequence_classification:
        return parts_.sequence_classification(graph, own, options).params;
      case ModelHead::question_answering:
        return parts_.question_answering(graph, own, options).params;
      case ModelHead::token_classification:
        return parts_.token_classification(graph, own, options).params;
      case ModelHead::masked_lm:
        return parts_.masked_lm(graph, own, options).params;
      case ModelHead::causal_lm:
        break;
    }
    encoder_missing_head(parts_.model_type);
  }

  LoadReport load_weights(ParameterSet& params, const std::string& path,
                          bool strict) const override {
    return parts_.load_weights(params, path, strict);
  }

  void save_pretrained(const std::string& folder, const PretrainedConfig& config,
                       const ParameterSet& params) const override {
    parts_.save_pretrained(folder, config_of(config), params);
  }

  bool takes_token_type_ids() const override { return parts_.takes_token_type_ids; }

  int64_t vocab_size(const PretrainedConfig& config) const override {
    return config_of(config).vocab_size;
  }

  int64_t max_positions(const PretrainedConfig& config) const override {
    return parts_.max_positions(config_of(config));
  }

  std::string_view wordpiece_tokenizer_class() const override {
    return parts_.wordpiece_tokenizer_class;
  }

 private:
  const Config& config_of(const PretrainedConfig& config) const {
    return family_config<Config>(config, parts_.model_type);
  }

  EncoderParts<Config, Heads...> parts_;
};

}  // namespace kiln
