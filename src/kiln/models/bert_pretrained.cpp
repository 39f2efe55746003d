// BERT checkpoint folders: name adaptation, loading and save_pretrained.
#include "kiln/models/bert_pretrained.h"

#include <filesystem>

#include "kiln/io/safetensors.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

bool starts_with_prefix(const std::string& name) { return name.starts_with("bert."); }

std::string rename_legacy(std::string name) {
  for (auto [from, to] : {std::pair{"LayerNorm.gamma", "LayerNorm.weight"},
                          std::pair{"LayerNorm.beta", "LayerNorm.bias"}}) {
    size_t at = name.find(from);
    if (at != std::string::npos) name.replace(at, std::string_view(from).size(), to);
  }
  return name;
}

}  // namespace

std::string bert_architecture(const ParameterSet& params) {
  if (params.contains("classifier.weight")) return "BertForSequenceClassification";
  if (params.contains("qa_outputs.weight")) return "BertForQuestionAnswering";
  if (params.contains("cls.predictions.bias")) return "BertForMaskedLM";
  return "BertModel";
}

std::map<std::string, Tensor> bert_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                    const ParameterSet& params) {
  bool model_prefixed = false, checkpoint_prefixed = false;
  for (const Parameter& param : params.parameters())
    model_prefixed |= starts_with_prefix(param.name);
  for (const auto& [name, tensor] : tensors) checkpoint_prefixed |= starts_with_prefix(name);

  // Older masked-LM checkpoints also store the decoder tied to the word embeddings, and its bias
  // under a second name; a model with the masked-LM head ties them instead.
  const bool tied_decoder = params.contains("cls.predictions.bias");
  const bool has_bias = tensors.contains("cls.predictions.bias");
  std::map<std::string, Tensor> out;
  for (auto& [name, tensor] : tensors) {
    if (name.ends_with("embeddings.position_ids") || name.ends_with("embeddings.token_type_ids")) {
      continue;  // non-persistent buffers in transformers; not weights
    }
    if (tied_decoder && name == "cls.predictions.decoder.weight") continue;
    if (tied_decoder && name == "cls.predictions.decoder.bias") {
      if (!has_bias) out.emplace("cls.predictions.bias", std::move(tensor));
      continue;
    }
    std::string key = rename_legacy(name);
    if (model_prefixed && !checkpoint_prefixed && !params.contains(key)) {
      key = "bert." + key;
    } else if (!model_prefixed && checkpoint_prefixed && starts_with_prefix(key)) {
      key = key.substr(5);
    }
    out.emplace(std::move(key), std::move(tensor));
  }
  return out;
}

LoadReport bert_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  std::string file =
      fs::is_directory(path) ? (fs::path(path) / "model.safetensors").string() : path;
  if (!fs::exists(file) && fs::exists(fs::path(path) / "model.safetensors.index.json")) {
    fail(path, "sharded checkpoints (model.safetensors.index.json) are not supported yet");
  }
  SafetensorsFile weights(file);
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : weights.names()) tensors.emplace(name, weights.to_tensor(name));
  return params.load(bert_adapt_state_dict(std::move(tensors), params), file, strict);
}

void bert_save_pretrained(const std::string& folder, BertConfig config,
                          const ParameterSet& params) {
  std::error_code error;
  fs::create_directories(folder, error);
  check(!error, folder, "cannot create the folder: ", error.message());
  if (config.architectures.empty()) {
    config.architectures = {bert_architecture(params)};
  }
  config.torch_dtype = params.dtype() == DType::f32    ? "float32"
                       : params.dtype() == DType::bf16 ? "bfloat16"
                       : params.dtype() == DType::f16  ? "float16"
                                                       : "float64";
  safetensors_write((fs::path(folder) / "model.safetensors").string(), params.state_dict());
  bert_config_write((fs::path(folder) / "config.json").string(), config);
}

}  // namespace kiln
