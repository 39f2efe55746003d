// GPT-2's heads (gpt2.h, gpt2_heads.h), config (gpt2_config.h) and checkpoints
// (gpt2_pretrained.h) as a ModelFamily.
#include "kiln/models/gpt2_family.h"

#include "kiln/ir/error.h"
#include "kiln/models/gpt2_heads.h"
#include "kiln/models/gpt2_pretrained.h"

namespace kiln {
namespace {

const Gpt2Config& gpt2(const PretrainedConfig& config) {
  return family_config<Gpt2Config>(config, "gpt2");
}

[[noreturn]] void missing_head() {
  fail("gpt2", "Kiln builds GPT-2 with sequence classification, token classification, question "
               "answering and causal LM heads only");
}

class Gpt2Family : public ModelFamily {
 public:
  std::string_view model_type() const override { return "gpt2"; }

  std::unique_ptr<PretrainedConfig> parse_config(std::string_view json_text,
                                                 std::string_view where) const override {
    return std::make_unique<Gpt2Config>(gpt2_config_parse(json_text, where));
  }

  std::string architecture(ModelHead head) const override {
    switch (head) {
      case ModelHead::sequence_classification:
        return "GPT2ForSequenceClassification";
      case ModelHead::token_classification:
        return "GPT2ForTokenClassification";
      case ModelHead::question_answering:
        return "GPT2ForQuestionAnswering";
      case ModelHead::causal_lm:
        return "GPT2LMHeadModel";
      case ModelHead::masked_lm:
        break;
    }
    missing_head();
  }

  TaskModel build(ModelHead head, Graph& graph, const PretrainedConfig& config,
                  const ModelBuildOptions& options) const override {
    const Gpt2Config& gpt2_config = gpt2(config);
    switch (head) {
      case ModelHead::sequence_classification: {
        Gpt2SequenceClassifier model =
            gpt2_for_sequence_classification(graph, gpt2_config, options);
        Value count;
        if (options.with_labels) {
          count = sequence_label_count(model.labels, model.inputs.attention_mask);
        }
        return task_model(model, {model.logits}, count);
      }
      case ModelHead::token_classification: {
        Gpt2TokenClassifier model = gpt2_for_token_classification(graph, gpt2_config, options);
        Value count;
        if (options.with_labels) count = token_label_count(model.labels);
        return task_model(model, {model.logits}, count);
      }
      case ModelHead::question_answering: {
        Gpt2QuestionAnswering model = gpt2_for_question_answering(graph, gpt2_config, options);
        Value count;
        if (options.with_labels) count = span_label_count(model.start_positions, options.seq_len);
        return task_model(model, {model.start_logits, model.end_logits}, count);
      }
      case ModelHead::causal_lm: {
        Gpt2CausalLM model = gpt2_lm_head_model(graph, gpt2_config, options);
        Value count;
        if (options.with_labels) count = causal_lm_label_count(model.labels);
        return task_model(model, {causal_lm_predictions(model.logits)}, count);
      }
      case ModelHead::masked_lm:
        break;
    }
    missing_head();
  }

  ParameterSet parameters(ModelHead head, Graph& graph,
                          const PretrainedConfig& config) const override {
    const Gpt2Config& gpt2_config = gpt2(config);
    ModelBuildOptions options;
    options.seq_len = 1;
    options.with_labels = false;
    switch (head) {
      case ModelHead::sequence_classification:
        return gpt2_for_sequence_classification(graph, gpt2_config, options).params;
      case ModelHead::token_classification:
        return gpt2_for_token_classification(graph, gpt2_config, options).params;
      case ModelHead::question_answering:
        return gpt2_for_question_answering(graph, gpt2_config, options).params;
      case ModelHead::causal_lm:
        return gpt2_lm_head_model(graph, gpt2_config, options).params;
      case ModelHead::masked_lm:
        break;
    }
    missing_head();
  }

  LoadReport load_weights(ParameterSet& params, const std::string& path,
                          bool strict) const override {
    return gpt2_load_weights(params, path, strict);
  }

  void save_pretrained(const std::string& folder, const PretrainedConfig& config,
                       const ParameterSet& params) const override {
    gpt2_save_pretrained(folder, gpt2(config), params);
  }

  bool takes_token_type_ids() const override { return false; }

  int64_t vocab_size(const PretrainedConfig& config) const override {
    return gpt2(config).vocab_size;
  }

  int64_t max_positions(const PretrainedConfig& config) const override {
    return gpt2(config).n_positions;
  }
};

}  // namespace

const ModelFamily& gpt2_family() {
  static const Gpt2Family family;
  return family;
}

}  // namespace kiln
