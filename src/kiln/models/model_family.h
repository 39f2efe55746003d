// The seam between tasks and model families. A family (BERT, ...) is keyed by config.json's
// model_type: it parses its config, builds the head a task needs as a graph, names that head's
// transformers class, and loads and saves Hugging Face checkpoints. The Trainer and the tasks
// reach every model through this interface; a family adds itself with one line in
// model_family.cpp.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/error.h"
#include "kiln/ir/graph.h"
#include "kiln/models/build_options.h"
#include "kiln/models/pretrained_config.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {

// The heads on a family's base model, one per kind of task.
enum class ModelHead {
  sequence_classification,  // ...ForSequenceClassification
  question_answering,       // ...ForQuestionAnswering (span start and end logits)
  masked_lm,                // ...ForMaskedLM
  token_classification,     // ...ForTokenClassification
  causal_lm,                // ...LMHeadModel / ...ForCausalLM
};

// The head of a transformers class by its name's ending: ...ForSequenceClassification,
// ...ForQuestionAnswering, ...ForMaskedLM, ...ForTokenClassification, ...LMHeadModel or
// ...ForCausalLM; none for others (BertModel, BertForPreTraining, ...).
std::optional<ModelHead> architecture_head(std::string_view architecture);
// The head a config's model has: its first architecture's, sequence classification when it
// names none (a new model); an Error naming `where` for an architecture without a known head.
ModelHead config_head(const PretrainedConfig& config, std::string_view where);

// One model graph of a head for one batch shape.
struct TaskModel {
  std::vector<Value> outputs;  // per row: logits (classification), start and end logits (qa)
  Value loss;                  // invalid without labels
  // f32 scalar: how many terms (rows, or masked tokens) the loss is the mean of, so that data
  // parallel replicas weight their losses into the loss of the whole batch.
  Value loss_count;
  std::vector<Value> params;   // in HF's named_parameters() order
  std::vector<bool> decay;
};

class ModelFamily {
 public:
  virtual ~ModelFamily() = default;

  // config.json's "model_type": "bert", ...
  virtual std::string_view model_type() const = 0;
  // config.json text as the family's config, checked; errors name `where` and the key.
  virtual std::unique_ptr<PretrainedConfig> parse_config(std::string_view json_text,
                                                         std::string_view where) const = 0;
  // The transformers class of the family's model with `head` ("BertForMaskedLM"); an Error
  // when the family has no such head.
  virtual std::string architecture(ModelHead head) const = 0;
  // The graph of `head` into `graph` (which must outlive the result). A head whose outputs are
  // only needed for the loss (masked LM's vocabulary-sized logits) returns none.
  virtual TaskModel build(ModelHead head, Graph& graph, const PretrainedConfig& config,
                          const ModelBuildOptions& options) const = 0;
  // The parameters of the head's model (a graph of one token without labels), for loading
  // checkpoints and save_pretrained.
  virtual ParameterSet parameters(ModelHead head, Graph& graph,
                                  const PretrainedConfig& config) const = 0;
  // A .safetensors file, or <folder>/model.safetensors, into `params` by state-dict name, with
  // transformers' renames between heads (see ParameterSet::load for `strict`).
  virtual LoadReport load_weights(ParameterSet& params, const std::string& path,
                                  bool strict) const = 0;
  // config.json and model.safetensors into `folder`, so that transformers loads them.
  virtual void save_pretrained(const std::string& folder, const PretrainedConfig& config,
                               const ParameterSet& params) const = 0;
  // Whether the model takes token_type_ids (BERT) besides input_ids and attention_mask.
  virtual bool takes_token_type_ids() const = 0;
  // The size of the model's token embeddings.
  virtual int64_t vocab_size(const PretrainedConfig& config) const = 0;
  // The longest sequence the model takes (max_position_embeddings, n_positions, ...).
  virtual int64_t max_positions(const PretrainedConfig& config) const = 0;
  // Optional: tokenizer_config.json's tokenizer_class for a WordPiece tokenizer saved with the
  // family's model when its own files named none, as the family's transformers tokenizer saves
  // itself ("DistilBertTokenizer", which gives no token_type_ids); empty: BertTokenizer.
  virtual std::string_view wordpiece_tokenizer_class() const { return {}; }
};

// For families' build(): a head's model (a struct with loss and params, as BertClassifier) and
// its outputs as a TaskModel.
template <typename Model>
TaskModel task_model(Model& model, std::vector<Value> outputs, Value loss_count) {
  return TaskModel{std::move(outputs), model.loss, loss_count, model.params.values(),
                   model.params.decay_flags()};
}

// `config` as the family's config type; an Error naming `family` when it is another's.
template <typename Config>
const Config& family_config(const PretrainedConfig& config, std::string_view family) {
  const auto* found = dynamic_cast<const Config*>(&config);
  check(found != nullptr, family, "the config of model_type \"", config.model_type, "\" is not ",
        family, "'s");
  return *found;
}

// TaskModel::loss_count for families' build(), by the head's labels. Sequence classification:
// the rows with a label (cross entropy skips -100), or, for float labels (regression,
// multi-label), the rows with tokens; QA: the rows whose start position lies inside the
// sequence; token labels (masked or causal LM, token classification): those that are not -100.
Value sequence_label_count(Value labels, Value attention_mask);
Value span_label_count(Value start_positions, int64_t seq_len);
Value token_label_count(Value labels);
// Causal LM: the labels [batch, seq] a token predicts (labels[:, 1:]) that are not -100.
Value causal_lm_label_count(Value labels);

// A causal LM's output for evaluation, run_clm.py's preprocess_logits_for_metrics: the argmax
// (the first maximal index, as torch.argmax) of logits [batch, seq, vocab] as i32 [batch, seq],
// so that no vocabulary-sized logits leave the device.
Value causal_lm_predictions(Value logits);

// The family of `model_type`; an Error naming `where` and the families Kiln has otherwise.
const ModelFamily& model_family(std::string_view model_type, std::string_view where = "config");
inline const ModelFamily& model_family(const PretrainedConfig& config) {
  return model_family(config.model_type);
}
// The model_types Kiln builds, in registration order.
std::vector<std::string_view> model_types();

// config.json text or file as the config of its model_type's family ("bert" when the file has
// none, as Kiln's own configs once did).
std::unique_ptr<PretrainedConfig> model_config_parse(std::string_view json_text,
                                                     std::string_view where);
std::unique_ptr<PretrainedConfig> model_config_read(const std::string& path);

}  // namespace kiln
