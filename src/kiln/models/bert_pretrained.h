// Hugging Face checkpoint folders for BERT: loading weights into a ParameterSet by state-dict name
// with transformers' conventions, and save_pretrained (config.json + model.safetensors). The
// encoder_* functions do the same for the families that share BERT's conventions under another
// prefix (RoBERTa, ELECTRA).
#pragma once

#include <map>
#include <string>

#include "kiln/io/bert_config.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {

// How a family's checkpoints name its tensors.
struct CheckpointNames {
  std::string prefix;  // the base model's attribute in the heads: "bert", "roberta", "electra"
  // The masked-LM decoder tied to the word embeddings: its bias parameter, which only a model
  // with that head has; the name under which checkpoints may also store the tied weight; and the
  // decoder's second name for that bias (empty when it has one name).
  std::string decoder_bias;
  std::string stored_decoder_weight;
  std::string stored_decoder_bias;
};

extern const CheckpointNames kBertCheckpointNames;

// What transformers does to checkpoint names before matching them: legacy "LayerNorm.gamma/beta"
// become ".weight/.bias"; the embeddings' position_ids/token_type_ids buffers some checkpoints
// carry are dropped; the masked-LM decoder's weight and bias that older checkpoints store beside
// the tied word embeddings and the decoder bias are dropped (or the bias renamed) for a model
// with that head; the "<prefix>." is added when a bare base-model checkpoint meets a model with a
// head, and removed in the opposite case.
std::map<std::string, Tensor> encoder_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                       const ParameterSet& params,
                                                       const CheckpointNames& names);
std::map<std::string, Tensor> bert_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                    const ParameterSet& params);

// The transformers class whose parameters these are: BertForSequenceClassification (a classifier
// on the pooler), BertForTokenClassification (a classifier without a pooler),
// BertForQuestionAnswering (qa_outputs), BertForMaskedLM (cls.predictions), else BertModel.
std::string bert_architecture(const ParameterSet& params);

// Loads a .safetensors file, or <folder>/model.safetensors, into `params` (see
// ParameterSet::load for `strict`) through encoder_adapt_state_dict; errors name the file and
// the tensor.
LoadReport encoder_load_weights(ParameterSet& params, const std::string& path, bool strict,
                                const CheckpointNames& names);
LoadReport bert_load_weights(ParameterSet& params, const std::string& path, bool strict = true);

// config.json's torch_dtype for parameters of `dtype`: "float32", "bfloat16", ...
std::string torch_dtype_name(DType dtype);

// Writes <folder>/model.safetensors (metadata format "pt") and <folder>/config.json (the text
// `config_json`), each atomically, creating the folder.
void encoder_save_pretrained(const std::string& folder, const std::string& config_json,
                             const ParameterSet& params);
// An empty config.architectures is filled by bert_architecture; torch_dtype is the parameters'.
void bert_save_pretrained(const std::string& folder, BertConfig config, const ParameterSet& params);

}  // namespace kiln
