// BERT checkpoint folders: name adaptation, loading and save_pretrained.
#include "kiln/models/bert_pretrained.h"

#include <filesystem>

#include "kiln/io/safetensors.h"
#include "kiln/io/safetensors_shards.h"
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

std::string bert_architecture(const ParameterSet& params) {
  if (params.contains("classifier.weight")) {
    return params.contains("bert.pooler.dense.weight") ? "BertForSequenceClassification"
                                                       : "BertForTokenClassification";
  }
  if (params.contains("qa_outputs.weight")) return "BertForQuestionAnswering";
  if (params.contains("cls.predictions.bias")) return "BertForMaskedLM";
  return "BertModel";
}

std::map<std::string, Tensor> adapt_base_model_names(std::map<std::string, Tensor> tensors,
                                                     const ParameterSet& params,
                                                     const std::string& base_prefix) {
  const std::string prefix = base_prefix + ".";
  bool model_prefixed = false, checkpoint_prefixed = false;
  for (const Parameter& param : params.parameters())
    model_prefixed |= param.name.starts_with(prefix);
  for (const auto& [name, tensor] : tensors) checkpoint_prefixed |= name.starts_with(prefix);

  std::map<std::string, Tensor> out;
  for (auto& [name, tensor] : tensors) {
    if (name.ends_with("embeddings.position_ids") || name.ends_with("embeddings.token_type_ids")) {
      continue;  // non-persistent buffers in transformers; not weights
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

void absorb_tied_decoder(std::map<std::string, Tensor>& tensors, const ParameterSet& params,
                         const std::string& bias, const std::string& stored_weight,
                         const std::string& stored_bias) {
  if (!params.contains(bias)) return;
  tensors.erase(stored_weight);
  auto found = stored_bias.empty() ? tensors.end() : tensors.find(stored_bias);
  if (found != tensors.end()) {
    if (!tensors.contains(bias)) tensors.emplace(bias, std::move(found->second));
    tensors.erase(stored_bias);
  }
}

std::map<std::string, Tensor> bert_adapt_state_dict(std::map<std::string, Tensor> tensors,
                                                    const ParameterSet& params) {
  absorb_tied_decoder(tensors, params, "cls.predictions.bias", "cls.predictions.decoder.weight",
                      "cls.predictions.decoder.bias");
  return adapt_base_model_names(std::move(tensors), params, "bert");
}

std::map<std::string, Tensor> read_checkpoint_tensors(const std::string& path, std::string& file) {
  file = fs::is_directory(path) ? (fs::path(path) / "model.safetensors").string() : path;
  if (fs::is_directory(path) && !fs::exists(file)) {
    const fs::path index = fs::path(path) / "model.safetensors.index.json";
    if (fs::exists(index)) {
      file = index.string();
      return safetensors_read_sharded(file);
    }
    for (const char* pickle : {"pytorch_model.bin", "pytorch_model.bin.index.json"}) {
      check(!fs::exists(fs::path(path) / pickle), path, "holds PyTorch weights (", pickle,
            ") but no model.safetensors; Kiln reads safetensors only. Convert the folder with "
            "transformers: python3 -c \"import sys, transformers as t; d = sys.argv[1]; "
            "c = t.AutoConfig.from_pretrained(d); "
            "getattr(t, c.architectures[0]).from_pretrained(d).save_pretrained(d)\" '",
            path, "'");
    }
  }
  SafetensorsFile weights(file);
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : weights.names()) tensors.emplace(name, weights.to_tensor(name));
  return tensors;
}

std::string torch_dtype_name(DType dtype) {
  return dtype == DType::f32    ? "float32"
         : dtype == DType::bf16 ? "bfloat16"
         : dtype == DType::f16  ? "float16"
                                : "float64";
}

void save_pretrained_weights(const std::string& folder, const ParameterSet& params) {
  std::error_code error;
  fs::create_directories(folder, error);
  check(!error, folder, "cannot create the folder: ", error.message());
  safetensors_write((fs::path(folder) / "model.safetensors").string(), params.state_dict());
}

LoadReport bert_load_weights(ParameterSet& params, const std::string& path, bool strict) {
  std::string file;
  std::map<std::string, Tensor> tensors = read_checkpoint_tensors(path, file);
  return params.load(bert_adapt_state_dict(std::move(tensors), params), file, strict);
}

void bert_save_pretrained(const std::string& folder, BertConfig config,
                          const ParameterSet& params) {
  if (config.architectures.empty()) {
    config.architectures = {bert_architecture(params)};
  }
  config.torch_dtype = torch_dtype_name(params.dtype());
  save_pretrained_weights(folder, params);
  bert_config_write((fs::path(folder) / "config.json").string(), config);
}

}  // namespace kiln
