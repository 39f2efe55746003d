// Hugging Face checkpoint folders for DistilBERT: loading weights into a ParameterSet by
// state-dict name with transformers' conventions, and save_pretrained (config.json +
// model.safetensors) that transformers loads.
#pragma once

#include <map>
#include <string>

#include "kiln/models/distilbert_config.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {

// What transformers does to checkpoint names before matching them: the position_ids buffer some
// checkpoints carry is dropped; vocab_projector.weight, which checkpoints may store beside the
// word embeddings it is tied to, is dropped for a model that ties it; the "distilbert." prefix
// is added when a bare DistilBertModel checkpoint meets a model with a head, and removed in the
// opposite case.
std::map<std::string, Tensor> distilbert_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                          const ParameterSet& params);

// The transformers class whose parameters these are: DistilBertForSequenceClassification
// (pre_classifier), DistilBertForTokenClassification (a classifier alone),
// DistilBertForQuestionAnswering (qa_outputs), DistilBertForMaskedLM (vocab_projector), else
// DistilBertModel.
std::string distilbert_architecture(const ParameterSet& params);

// Loads a .safetensors file, or <folder>/model.safetensors, into `params` (see
// ParameterSet::load for `strict`); errors name the file and the tensor.
LoadReport distilbert_load_weights(ParameterSet& params, const std::string& path,
                                   bool strict = true);

// Writes <folder>/config.json and <folder>/model.safetensors, each atomically, creating the
// folder. An empty config.architectures is filled by distilbert_architecture; torch_dtype is the
// parameters' dtype.
void distilbert_save_pretrained(const std::string& folder, DistilBertConfig config,
                                const ParameterSet& params);

}  // namespace kiln
