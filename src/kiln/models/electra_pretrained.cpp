// ELECTRA checkpoint folders: BERT's name adaptation under "electra.", loading and
// save_pretrained.
#include "kiln/models/electra_pretrained.h"

namespace kiln {

// The generator's bias has one name; only its tied weight may be stored twice.
const CheckpointNames kElectraCheckpointNames = {"electra", "generator_lm_head.bias",
                                                 "generator_lm_head.weight", ""};

std::string electra_architecture(const ParameterSet& params) {
  if (params.contains("classifier.out_proj.weight")) return "ElectraForSequenceClassification";
  if (params.contains("classifier.weight")) return "ElectraForTokenClassification";
  if (params.contains("qa_outputs.weight")) return "ElectraForQuestionAnswering";
  if (params.contains("generator_lm_head.bias")) return "ElectraForMaskedLM";
  if (params.contains("discriminator_predictions.dense.weight")) return "ElectraForPreTraining";
  return "ElectraModel";
}

LoadReport electra_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  return encoder_load_weights(params, path, strict, kElectraCheckpointNames);
}

void electra_save_pretrained(const std::string& folder, ElectraConfig config,
                             const ParameterSet& params) {
  if (config.architectures.empty()) config.architectures = {electra_architecture(params)};
  config.torch_dtype = torch_dtype_name(params.dtype());
  encoder_save_pretrained(folder, electra_config_to_json(config), params);
}

}  // namespace kiln
