// Hugging Face checkpoint folders for ELECTRA: loading weights with transformers' conventions (the
// "electra." prefix, dropped buffers, the tied generator_lm_head) and save_pretrained
// (config.json + model.safetensors) that transformers loads.
#pragma once

#include <map>
#include <string>

#include "kiln/models/bert_pretrained.h"
#include "kiln/models/electra_config.h"

namespace kiln {

// bert_adapt_state_dict's renames under "electra.": legacy names, dropped buffers, the prefix
// added or removed, and generator_lm_head.weight (tied to the word embeddings) dropped.
std::map<std::string, Tensor> electra_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                       const ParameterSet& params);

// The transformers class whose parameters these are: ElectraForSequenceClassification
// (classifier.out_proj), ElectraForTokenClassification (classifier), ElectraForQuestionAnswering
// (qa_outputs), ElectraForMaskedLM (generator_lm_head), ElectraForPreTraining
// (discriminator_predictions), else ElectraModel.
std::string electra_architecture(const ParameterSet& params);

// Loads a .safetensors file, or <folder>/model.safetensors, into `params` (see
// ParameterSet::load for `strict`); errors name the file and the tensor.
LoadReport electra_load_weights(ParameterSet& params, const std::string& path, bool strict = true);

// Writes <folder>/config.json and <folder>/model.safetensors, each atomically, creating the
// folder. An empty config.architectures is filled by electra_architecture; torch_dtype is the
// parameters'.
void electra_save_pretrained(const std::string& folder, ElectraConfig config,
                             const ParameterSet& params);

}  // namespace kiln
