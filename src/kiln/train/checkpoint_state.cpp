// optimizer.safetensors and rng_state.json: writing, and reading back with checks.
#include "kiln/train/checkpoint_state.h"

#include <charconv>

#include <nlohmann/json.hpp>

#include "kiln/io/atomic_file.h"
#include "kiln/io/safetensors.h"
#include "kiln/train/checkpoint_json.h"
#include "kiln/train/log_python_json.h"

namespace kiln {
namespace {

constexpr std::string_view kExpAvg = ".exp_avg";
constexpr std::string_view kExpAvgSq = ".exp_avg_sq";

bool same_layout(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape();
}

std::string layout_str(const Tensor& tensor) {
  return std::string(dtype_name(tensor.dtype())) + shape_str(tensor.shape());
}

}  // namespace

void optimizer_state_write(const std::string& path, const AdamWState& state) {
  check(state.exp_avg.size() == state.exp_avg_sq.size(), path,
        "exp_avg and exp_avg_sq cover different parameters");
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, moment] : state.exp_avg) {
    auto second = state.exp_avg_sq.find(name);
    check(second != state.exp_avg_sq.end(), path, "parameter '", name, "' has no exp_avg_sq");
    tensors.emplace(name + std::string(kExpAvg), moment);
    tensors.emplace(name + std::string(kExpAvgSq), second->second);
  }
  safetensors_write(path, tensors, {{"optimizer", "adamw"}, {"step", std::to_string(state.step)}});
}

AdamWState optimizer_state_read(const std::string& path) {
  SafetensorsFile file(path);
  AdamWState state;
  auto step = file.metadata().find("step");
  check(step != file.metadata().end(), path, "no 'step' in the metadata");
  const std::string& text = step->second;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), state.step);
  check(error == std::errc() && end == text.data() + text.size() && state.step >= 0, path,
        "metadata 'step' is not a step count: '", text, "'");
  for (const std::string& name : file.names()) {
    if (name.ends_with(kExpAvgSq)) {
      state.exp_avg_sq.emplace(name.substr(0, name.size() - kExpAvgSq.size()), file.to_tensor(name));
    } else if (name.ends_with(kExpAvg)) {
      state.exp_avg.emplace(name.substr(0, name.size() - kExpAvg.size()), file.to_tensor(name));
    } else {
      fail(path, "tensor '", name, "': not an AdamW moment (<parameter>.exp_avg or .exp_avg_sq)");
    }
  }
  for (const auto& [name, moment] : state.exp_avg) {
    auto second = state.exp_avg_sq.find(name);
    check(second != state.exp_avg_sq.end(), path, "tensor '", name, kExpAvgSq, "' is missing");
    check(same_layout(moment, second->second), path, "parameter '", name, "': exp_avg is ",
          layout_str(moment), " but exp_avg_sq is ", layout_str(second->second));
  }
  for (const auto& [name, moment] : state.exp_avg_sq) {
    check(state.exp_avg.contains(name), path, "tensor '", name, kExpAvg, "' is missing");
  }
  return state;
}

void optimizer_state_check(const AdamWState& state, const std::map<std::string, Tensor>& params,
                           std::string_view where) {
  for (const auto& [name, param] : params) {
    auto moment = state.exp_avg.find(name);
    check(moment != state.exp_avg.end(), where, "no optimizer state for parameter '", name, "'");
    check(same_layout(moment->second, param), where, "parameter '", name, "' is ",
          layout_str(param), " but its optimizer state is ", layout_str(moment->second));
  }
  for (const auto& [name, moment] : state.exp_avg) {
    check(params.contains(name), where, "optimizer state for '", name,
          "', which the model does not have");
  }
}

void rng_state_write(const std::string& path, const RngState& state) {
  nlohmann::json object = {
      {"seed", state.seed},
      {"data_seed", state.data_seed},
      {"epoch", state.epoch},
      {"step_in_epoch", state.step_in_epoch},
      {"sampler_position", state.sampler_position},
  };
  write_file_atomically(path, python_json_dumps(object, 2) + "\n");
}

RngState rng_state_read(const std::string& path) {
  nlohmann::json object = read_json_object(path);
  RngState state;
  state.seed = json_field<int64_t>(object, "seed", path);
  state.data_seed = json_field<int64_t>(object, "data_seed", path);
  state.epoch = json_field<int64_t>(object, "epoch", path);
  state.step_in_epoch = json_field<int64_t>(object, "step_in_epoch", path);
  state.sampler_position = json_field<int64_t>(object, "sampler_position", path);
  return state;
}

}  // namespace kiln
