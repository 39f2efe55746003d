// Hugging Face checkpoint folders for BERT: loading weights into a ParameterSet by state-dict name
// with transformers' conventions, and save_pretrained (config.json + model.safetensors).
#pragma once

#include <map>
#include <string>

#include "kiln/models/bert_config.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {

// What transformers does to checkpoint names before matching them: legacy "LayerNorm.gamma/beta"
// become ".weight/.bias"; the embeddings' position_ids/token_type_ids buffers some checkpoints
// carry are dropped; the masked-LM decoder's weight and bias that older checkpoints store beside
// the tied word embeddings and cls.predictions.bias are dropped (or the bias renamed) for a model
// with that head; the "bert." prefix is added when a bare BertModel checkpoint meets a model
// with a head, and removed in the opposite case.
std::map<std::string, Tensor> bert_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                    const ParameterSet& params);

// The transformers class whose parameters these are: BertForSequenceClassification (a classifier
// on the pooler), BertForTokenClassification (a classifier without a pooler),
// BertForQuestionAnswering (qa_outputs), BertForMaskedLM (cls.predictions), else BertModel.
std::string bert_architecture(const ParameterSet& params);

// The renames every family's checkpoints get (bert_adapt_state_dict's, but the masked-LM
// decoder's), for a model whose base model's parameters are under `base_prefix` ("bert",
// "distilbert", ...).
std::map<std::string, Tensor> adapt_base_model_names(std::map<std::string, Tensor> tensors,
                                                     const ParameterSet& params,
                                                     const std::string& base_prefix);

// Older masked-LM checkpoints also store the decoder tied to the word embeddings (as
// `stored_weight`) and its bias under a second name (`stored_bias`; empty when it has one); a
// model with that head (the parameter `bias`) ties them instead: the tensors are dropped, the
// second bias kept as `bias` when the checkpoint has no tensor of that name.
void absorb_tied_decoder(std::map<std::string, Tensor>& tensors, const ParameterSet& params,
                         const std::string& bias, const std::string& stored_weight,
                         const std::string& stored_bias);

// Every tensor of a .safetensors file, or of <folder>/model.safetensors, or of the shards that
// <folder>/model.safetensors.index.json lists; the file (or index) read goes to `file`. A folder
// with PyTorch weights only (pytorch_model.bin) is refused with the command that converts it.
// Errors name the file and the tensor.
std::map<std::string, Tensor> read_checkpoint_tensors(const std::string& path, std::string& file);

// transformers' torch_dtype of a parameter dtype: "float32", "bfloat16", "float16", "float64".
std::string torch_dtype_name(DType dtype);

// Creates `folder` and writes `params` as <folder>/model.safetensors (metadata format "pt"),
// atomically.
void save_pretrained_weights(const std::string& folder, const ParameterSet& params);

// Loads a .safetensors file, or <folder>/model.safetensors, into `params` (see
// ParameterSet::load for `strict`); errors name the file and the tensor.
LoadReport bert_load_weights(ParameterSet& params, const std::string& path, bool strict = true);

// Writes <folder>/config.json and <folder>/model.safetensors (metadata format "pt"), each
// atomically, creating the folder. An empty config.architectures is filled by bert_architecture.
void bert_save_pretrained(const std::string& folder, BertConfig config, const ParameterSet& params);

}  // namespace kiln
