// ELECTRA checkpoint folders: BERT's name adaptation under "electra.", loading and
// save_pretrained.
#include "kiln/models/electra_pretrained.h"

#include <filesystem>

#include "kiln/io/atomic_file.h"

namespace kiln {

std::map<std::string, Tensor> electra_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                       const ParameterSet& params) {
  absorb_tied_decoder(tensors, params, "generator_lm_head.bias", "generator_lm_head.weight", "");
  return adapt_base_model_names(std::move(tensors), params, "electra");
}

std::string electra_architecture(const ParameterSet& params) {
  if (params.contains("classifier.out_proj.weight")) return "ElectraForSequenceClassification";
  if (params.contains("classifier.weight")) return "ElectraForTokenClassification";
  if (params.contains("qa_outputs.weight")) return "ElectraForQuestionAnswering";
  if (params.contains("generator_lm_head.bias")) return "ElectraForMaskedLM";
  if (params.contains("discriminator_predictions.dense.weight")) return "ElectraForPreTraining";
  return "ElectraModel";
}

LoadReport electra_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  std::string file;
  std::map<std::string, Tensor> tensors = read_checkpoint_tensors(path, file);
  return params.load(electra_adapt_state_dict(std::move(tensors), params), file, strict);
}

void electra_save_pretrained(const std::string& folder, ElectraConfig config,
                             const ParameterSet& params) {
  if (config.architectures.empty()) config.architectures = {electra_architecture(params)};
  config.torch_dtype = torch_dtype_name(params.dtype());
  std::string json = electra_config_to_json(config);  // checked before anything is written
  save_pretrained_weights(folder, params);
  write_file_atomically((std::filesystem::path(folder) / "config.json").string(), json);
}

}  // namespace kiln
