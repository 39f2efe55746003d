// BERT's heads (bert.h, bert_heads.h), config (bert_config.h) and checkpoints
// (bert_pretrained.h) as a ModelFamily.
#include "kiln/models/bert_family.h"

#include "kiln/ir/error.h"
#include "kiln/models/bert_heads.h"
#include "kiln/models/bert_pretrained.h"

namespace kiln {
namespace {

template <typename Model>
TaskModel parts(Model& model, std::vector<Value> outputs, Value loss_count) {
  return TaskModel{std::move(outputs), model.loss, loss_count, model.params.values(),
                   model.params.decay_flags()};
}

const BertConfig& bert(const PretrainedConfig& config) {
  const auto* found = dynamic_cast<const BertConfig*>(&config);
  check(found != nullptr, "bert", "the config of model_type \"", config.model_type,
        "\" is not a BertConfig");
  return *found;
}

[[noreturn]] void missing_head() {
  fail("bert", "Kiln builds BERT with sequence classification, question answering, masked LM "
               "and token classification heads only");
}

class BertFamily : public ModelFamily {
 public:
  std::string_view model_type() const override { return "bert"; }

  std::unique_ptr<PretrainedConfig> parse_config(std::string_view json_text,
                                                 std::string_view where) const override {
    return std::make_unique<BertConfig>(bert_config_parse(json_text, where));
  }

  std::string architecture(ModelHead head) const override {
    switch (head) {
      case ModelHead::sequence_classification:
        return "BertForSequenceClassification";
      case ModelHead::question_answering:
        return "BertForQuestionAnswering";
      case ModelHead::masked_lm:
        return "BertForMaskedLM";
      case ModelHead::token_classification:
        return "BertForTokenClassification";
      case ModelHead::causal_lm:
        break;
    }
    missing_head();
  }

  TaskModel build(ModelHead head, Graph& graph, const PretrainedConfig& config,
                  const ModelBuildOptions& options) const override {
    const BertConfig& bert_config = bert(config);
    switch (head) {
      case ModelHead::sequence_classification: {
        BertClassifier model = bert_for_sequence_classification(graph, bert_config, options);
        Value count;
        if (options.with_labels) {
          count = sequence_label_count(model.labels, model.inputs.attention_mask);
        }
        return parts(model, {model.logits}, count);
      }
      case ModelHead::question_answering: {
        BertQuestionAnswering model = bert_for_question_answering(graph, bert_config, options);
        Value count;
        if (options.with_labels) count = span_label_count(model.start_positions, options.seq_len);
        return parts(model, {model.start_logits, model.end_logits}, count);
      }
      case ModelHead::masked_lm: {
        BertMaskedLM model = bert_for_masked_lm(graph, bert_config, options);
        Value count;
        if (options.with_labels) count = token_label_count(model.labels);
        return parts(model, {}, count);
      }
      case ModelHead::token_classification: {
        BertTokenClassification model = bert_for_token_classification(graph, bert_config, options);
        Value count;
        if (options.with_labels) count = token_label_count(model.labels);
        return parts(model, {model.logits}, count);
      }
      case ModelHead::causal_lm:
        break;
    }
    missing_head();
  }

  ParameterSet parameters(ModelHead head, Graph& graph,
                          const PretrainedConfig& config) const override {
    const BertConfig& bert_config = bert(config);
    ModelBuildOptions options;
    options.seq_len = 1;
    options.with_labels = false;
    switch (head) {
      case ModelHead::sequence_classification:
        return bert_for_sequence_classification(graph, bert_config, options).params;
      case ModelHead::question_answering:
        return bert_for_question_answering(graph, bert_config, options).params;
      case ModelHead::masked_lm:
        return bert_for_masked_lm(graph, bert_config, options).params;
      case ModelHead::token_classification:
        return bert_for_token_classification(graph, bert_config, options).params;
      case ModelHead::causal_lm:
        break;
    }
    missing_head();
  }

  LoadReport load_weights(ParameterSet& params, const std::string& path,
                          bool strict) const override {
    return bert_load_weights(params, path, strict);
  }

  void save_pretrained(const std::string& folder, const PretrainedConfig& config,
                       const ParameterSet& params) const override {
    bert_save_pretrained(folder, bert(config), params);
  }

  bool takes_token_type_ids() const override { return true; }

  int64_t vocab_size(const PretrainedConfig& config) const override {
    return bert(config).vocab_size;
  }

  int64_t max_positions(const PretrainedConfig& config) const override {
    return bert(config).max_position_embeddings;
  }
};

}  // namespace

const ModelFamily& bert_family() {
  static const BertFamily family;
  return family;
}

}  // namespace kiln
