// RoBERTa checkpoint folders: BERT's name adaptation under "roberta.", loading and
// save_pretrained.
#include "kiln/models/roberta_pretrained.h"

namespace kiln {

const CheckpointNames kRobertaCheckpointNames = {"roberta", "lm_head.bias",
                                                 "lm_head.decoder.weight", "lm_head.decoder.bias"};

std::string roberta_architecture(const ParameterSet& params, const std::string& model_type) {
  const std::string family = model_type == "xlm-roberta" ? "XLMRoberta" : "Roberta";
  if (params.contains("classifier.out_proj.weight")) return family + "ForSequenceClassification";
  if (params.contains("classifier.weight")) return family + "ForTokenClassification";
  if (params.contains("qa_outputs.weight")) return family + "ForQuestionAnswering";
  if (params.contains("lm_head.bias")) return family + "ForMaskedLM";
  return family + "Model";
}

LoadReport roberta_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  return encoder_load_weights(params, path, strict, kRobertaCheckpointNames);
}

void roberta_save_pretrained(const std::string& folder, RobertaConfig config,
                             const ParameterSet& params) {
  if (config.architectures.empty()) {
    config.architectures = {roberta_architecture(params, config.model_type)};
  }
  config.torch_dtype = torch_dtype_name(params.dtype());
  encoder_save_pretrained(folder, roberta_config_to_json(config), params);
}

}  // namespace kiln
