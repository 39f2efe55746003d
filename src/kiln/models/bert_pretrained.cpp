// BERT checkpoint folders (and those of the families with BERT's conventions): name adaptation,
// loading and save_pretrained.
#include "kiln/models/bert_pretrained.h"

#include <filesystem>

#include "kiln/io/atomic_file.h"
#include "kiln/io/safetensors.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::string rename_legacy(std::string name) {
  for (auto [from, to] : {std::pair{"LayerNorm.gamma", "LayerNorm.weight"},
                          std::pair{"LayerNorm.beta", "LayerNorm.bias"}}) {
    size_t at = name.find(from);
    if (at != std::string::npos) name.replace(at, std::string_view(from).size(), to);
  }
  return name;
}

}  // namespace

const CheckpointNames kBertCheckpointNames = {"bert", "cls.predictions.bias",
                                              "cls.predictions.decoder.weight",
                                              "cls.predictions.decoder.bias"};

std::string bert_architecture(const ParameterSet& params) {
  if (params.contains("classifier.weight")) {
    return params.contains("bert.pooler.dense.weight") ? "BertForSequenceClassification"
                                                       : "BertForTokenClassification";
  }
  if (params.contains("qa_outputs.weight")) return "BertForQuestionAnswering";
  if (params.contains("cls.predictions.bias")) return "BertForMaskedLM";
  return "BertModel";
}

std::map<std::string, Tensor> encoder_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                       const ParameterSet& params,
                                                       const CheckpointNames& names) {
  const std::string prefix = names.prefix + ".";
  bool model_prefixed = false, checkpoint_prefixed = false;
  for (const Parameter& param : params.parameters()) {
    model_prefixed |= param.name.starts_with(prefix);
  }
  for (const auto& [name, tensor] : tensors) checkpoint_prefixed |= name.starts_with(prefix);

  // Older masked-LM checkpoints also store the decoder tied to the word embeddings, and its bias
  // under a second name; a model with the masked-LM head ties them instead.
  const bool tied_decoder = params.contains(names.decoder_bias);
  const bool has_bias = tensors.contains(names.decoder_bias);
  std::map<std::string, Tensor> out;
  for (auto& [name, tensor] : tensors) {
    if (name.ends_with("embeddings.position_ids") || name.ends_with("embeddings.token_type_ids")) {
      continue;  // non-persistent buffers in transformers; not weights
    }
    if (tied_decoder && name == names.stored_decoder_weight) continue;
    if (tied_decoder && !names.stored_decoder_bias.empty() && name == names.stored_decoder_bias) {
      if (!has_bias) out.emplace(names.decoder_bias, std::move(tensor));
      continue;
    }
    std::string key = rename_legacy(name);
    if (model_prefixed && !checkpoint_prefixed && !params.contains(key)) {
      key = prefix + key;
    } else if (!model_prefixed && checkpoint_prefixed && key.starts_with(prefix)) {
      key = key.substr(prefix.size());
    }
    out.emplace(std::move(key), std::move(tensor));
  }
  return out;
}

std::map<std::string, Tensor> bert_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                    const ParameterSet& params) {
  return encoder_adapt_state_dict(std::move(tensors), params, kBertCheckpointNames);
}

LoadReport encoder_load_weights(ParameterSet& params, const std::string& path, bool strict,
                                const CheckpointNames& names) {
  std::string file =
      fs::is_directory(path) ? (fs::path(path) / "model.safetensors").string() : path;
  if (!fs::exists(file) && fs::exists(fs::path(path) / "model.safetensors.index.json")) {
    fail(path, "sharded checkpoints (model.safetensors.index.json) are not supported yet");
  }
  SafetensorsFile weights(file);
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : weights.names()) tensors.emplace(name, weights.to_tensor(name));
  return params.load(encoder_adapt_state_dict(std::move(tensors), params, names), file, strict);
}

LoadReport bert_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  return encoder_load_weights(params, path, strict, kBertCheckpointNames);
}

std::string torch_dtype_name(DType dtype) {
  return dtype == DType::f32    ? "float32"
         : dtype == DType::bf16 ? "bfloat16"
         : dtype == DType::f16  ? "float16"
                                : "float64";
}

void encoder_save_pretrained(const std::string& folder, const std::string& config_json,
                             const ParameterSet& params) {
  std::error_code error;
  fs::create_directories(folder, error);
  check(!error, folder, "cannot create the folder: ", error.message());
  safetensors_write((fs::path(folder) / "model.safetensors").string(), params.state_dict());
  write_file_atomically((fs::path(folder) / "config.json").string(), config_json);
}

void bert_save_pretrained(const std::string& folder, BertConfig config,
                          const ParameterSet& params) {
  if (config.architectures.empty()) config.architectures = {bert_architecture(params)};
  config.torch_dtype = torch_dtype_name(params.dtype());
  encoder_save_pretrained(folder, bert_config_to_json(config), params);
}

}  // namespace kiln
