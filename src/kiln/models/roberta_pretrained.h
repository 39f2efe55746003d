// Hugging Face checkpoint folders for RoBERTa and XLM-RoBERTa: loading weights with
// transformers' conventions (the "roberta." prefix, dropped buffers, the tied lm_head decoder) and
// save_pretrained (config.json + model.safetensors) that transformers loads.
#pragma once

#include <map>
#include <string>

#include "kiln/models/bert_pretrained.h"
#include "kiln/models/roberta_config.h"

namespace kiln {

// bert_adapt_state_dict's renames under "roberta.": legacy names, dropped buffers, the prefix
// added or removed, and the lm_head decoder tied to the word embeddings (lm_head.decoder.weight
// dropped, lm_head.decoder.bias kept as lm_head.bias when that is missing).
std::map<std::string, Tensor> roberta_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                       const ParameterSet& params);

// The transformers class whose parameters these are, named for `model_type` ("Roberta..." or
// "XLMRoberta..."): ForSequenceClassification (classifier.out_proj), ForTokenClassification
// (classifier), ForQuestionAnswering (qa_outputs), ForMaskedLM (lm_head), else Model.
std::string roberta_architecture(const ParameterSet& params, const std::string& model_type);

// Loads a .safetensors file, or <folder>/model.safetensors, into `params` (see
// ParameterSet::load for `strict`); errors name the file and the tensor.
LoadReport roberta_load_weights(ParameterSet& params, const std::string& path, bool strict = true);

// Writes <folder>/config.json and <folder>/model.safetensors, each atomically, creating the
// folder. An empty config.architectures is filled by roberta_architecture; torch_dtype is the
// parameters'.
void roberta_save_pretrained(const std::string& folder, RobertaConfig config,
                             const ParameterSet& params);

}  // namespace kiln
