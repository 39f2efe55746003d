// GPT-2 checkpoint folders: name adaptation, loading and save_pretrained.
#include "kiln/models/gpt2_pretrained.h"

#include <filesystem>

#include "kiln/models/bert_pretrained.h"

namespace kiln {

std::string gpt2_architecture(const ParameterSet& params) {
  if (params.contains("score.weight")) return "GPT2ForSequenceClassification";
  if (params.contains("classifier.weight")) return "GPT2ForTokenClassification";
  if (params.contains("qa_outputs.weight")) return "GPT2ForQuestionAnswering";
  if (params.contains("transformer.wte.weight")) return "GPT2LMHeadModel";
  return "GPT2Model";
}

std::map<std::string, Tensor> gpt2_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                    const ParameterSet& params) {
  std::erase_if(tensors, [](const auto& entry) {
    return entry.first.ends_with(".attn.bias") || entry.first.ends_with(".attn.masked_bias");
  });
  if (gpt2_architecture(params) == "GPT2LMHeadModel" && !params.contains("lm_head.weight")) {
    tensors.erase("lm_head.weight");
  }
  return adapt_base_model_names(std::move(tensors), params, "transformer");
}

LoadReport gpt2_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  std::string file;
  std::map<std::string, Tensor> tensors = read_checkpoint_tensors(path, file);
  return params.load(gpt2_adapt_state_dict(std::move(tensors), params), file, strict);
}

void gpt2_save_pretrained(const std::string& folder, Gpt2Config config,
                          const ParameterSet& params) {
  if (config.architectures.empty()) config.architectures = {gpt2_architecture(params)};
  config.torch_dtype = torch_dtype_name(params.dtype());
  save_pretrained_weights(folder, params);
  gpt2_config_write((std::filesystem::path(folder) / "config.json").string(), config);
}

}  // namespace kiln
