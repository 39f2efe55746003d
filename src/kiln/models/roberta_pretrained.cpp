// RoBERTa checkpoint folders: BERT's name adaptation under "roberta.", loading and
// save_pretrained.
#include "kiln/models/roberta_pretrained.h"

#include <filesystem>

#include "kiln/io/atomic_file.h"

namespace kiln {

std::map<std::string, Tensor> roberta_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                       const ParameterSet& params) {
  absorb_tied_decoder(tensors, params, "lm_head.bias", "lm_head.decoder.weight",
                      "lm_head.decoder.bias");
  return adapt_base_model_names(std::move(tensors), params, "roberta");
}

std::string roberta_architecture(const ParameterSet& params, const std::string& model_type) {
  const std::string family = model_type == "xlm-roberta" ? "XLMRoberta" : "Roberta";
  if (params.contains("classifier.out_proj.weight")) return family + "ForSequenceClassification";
  if (params.contains("classifier.weight")) return family + "ForTokenClassification";
  if (params.contains("qa_outputs.weight")) return family + "ForQuestionAnswering";
  if (params.contains("lm_head.bias")) return family + "ForMaskedLM";
  return family + "Model";
}

LoadReport roberta_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  std::string file;
  std::map<std::string, Tensor> tensors = read_checkpoint_tensors(path, file);
  return params.load(roberta_adapt_state_dict(std::move(tensors), params), file, strict);
}

void roberta_save_pretrained(const std::string& folder, RobertaConfig config,
                             const ParameterSet& params) {
  if (config.architectures.empty()) {
    config.architectures = {roberta_architecture(params, config.model_type)};
  }
  config.torch_dtype = torch_dtype_name(params.dtype());
  std::string json = roberta_config_to_json(config);  // checked before anything is written
  save_pretrained_weights(folder, params);
  write_file_atomically((std::filesystem::path(folder) / "config.json").string(), json);
}

}  // namespace kiln
