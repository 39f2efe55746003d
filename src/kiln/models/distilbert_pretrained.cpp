// DistilBERT checkpoint folders: name adaptation, loading and save_pretrained, on BERT's
// checkpoint helpers (bert_pretrained.h).
#include "kiln/models/distilbert_pretrained.h"

#include <filesystem>

#include "kiln/models/bert_pretrained.h"

namespace kiln {

std::string distilbert_architecture(const ParameterSet& params) {
  if (params.contains("pre_classifier.weight")) return "DistilBertForSequenceClassification";
  if (params.contains("classifier.weight")) return "DistilBertForTokenClassification";
  if (params.contains("qa_outputs.weight")) return "DistilBertForQuestionAnswering";
  if (params.contains("vocab_projector.bias")) return "DistilBertForMaskedLM";
  return "DistilBertModel";
}

std::map<std::string, Tensor> distilbert_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                          const ParameterSet& params) {
  if (params.contains("vocab_projector.bias") && !params.contains("vocab_projector.weight")) {
    tensors.erase("vocab_projector.weight");
  }
  return adapt_base_model_names(std::move(tensors), params, "distilbert");
}

LoadReport distilbert_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  std::string file;
  std::map<std::string, Tensor> tensors = read_checkpoint_tensors(path, file);
  return params.load(distilbert_adapt_state_dict(std::move(tensors), params), file, strict);
}

void distilbert_save_pretrained(const std::string& folder, DistilBertConfig config,
                                const ParameterSet& params) {
  if (config.architectures.empty()) config.architectures = {distilbert_architecture(params)};
  config.torch_dtype = torch_dtype_name(params.dtype());
  save_pretrained_weights(folder, params);
  distilbert_config_write((std::filesystem::path(folder) / "config.json").string(), config);
}

}  // namespace kiln
