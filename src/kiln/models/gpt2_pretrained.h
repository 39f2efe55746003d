// Hugging Face checkpoint folders for GPT-2: loading weights into a ParameterSet by state-dict
// name with transformers' conventions, and save_pretrained (config.json + model.safetensors)
// that transformers loads.
#pragma once

#include <map>
#include <string>

#include "kiln/models/gpt2_config.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {

// What transformers does to checkpoint names before matching them: the attention's causal-mask
// buffers older checkpoints carry (attn.bias, attn.masked_bias) are dropped; lm_head.weight,
// which some checkpoints store beside the wte it is tied to, is dropped for a tied LM; the
// "transformer." prefix is added when a bare GPT2Model checkpoint ("h.0. ...") meets a model
// with a head, and removed in the opposite case.
std::map<std::string, Tensor> gpt2_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                    const ParameterSet& params);

// The transformers class whose parameters these are: GPT2ForSequenceClassification (score),
// GPT2ForTokenClassification (classifier), GPT2ForQuestionAnswering (qa_outputs),
// GPT2LMHeadModel (under "transformer." with no other head), else GPT2Model.
std::string gpt2_architecture(const ParameterSet& params);

// Loads a checkpoint (read_checkpoint_tensors) into `params` (see ParameterSet::load for
// `strict`); errors name the file and the tensor.
LoadReport gpt2_load_weights(ParameterSet& params, const std::string& path, bool strict = true);

// Writes <folder>/config.json and <folder>/model.safetensors, each atomically, creating the
// folder. An empty config.architectures is filled by gpt2_architecture; torch_dtype is the
// parameters' dtype. A tied LM head is saved as transformers saves it: as wte alone.
void gpt2_save_pretrained(const std::string& folder, Gpt2Config config,
                          const ParameterSet& params);

}  // namespace kiln
