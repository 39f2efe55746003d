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

std::string layout_str(const Tensor& tensor) {
  return std::string(dtype_name(tensor.dtype())) + shape_str(tensor.shape());
}

}  // namespace

void optimizer_state_write(const std::string& path, const OptimizerState& state) {
  safetensors_write(path, state.slots,
                    {{"optimizer", state.optimizer}, {"step", std::to_string(state.step)}});
}

OptimizerState optimizer_state_read(const std::string& path) {
  SafetensorsFile file(path);
  OptimizerState state;
  auto step = file.metadata().find("step");
  check(step != file.metadata().end(), path, "no 'step' in the metadata");
  const std::string& text = step->second;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), state.step);
  check(error == std::errc() && end == text.data() + text.size() && state.step >= 0, path,
        "metadata 'step' is not a step count: '", text, "'");
  if (auto kind = file.metadata().find("optimizer"); kind != file.metadata().end()) {
    state.optimizer = kind->second;
  }
  for (const std::string& name : file.names()) state.slots.emplace(name, file.to_tensor(name));
  return state;
}

void optimizer_state_check(const OptimizerState& state, const std::map<std::string, Tensor>& params,
                           const std::string& optimizer, const Optimizer& rule,
                           std::string_view where) {
  check(state.optimizer == optimizer, where, "the optimizer state is ", state.optimizer,
        "'s; this run's --optim is ", optimizer, " (a run resumes with the optimizer it saved)");
  size_t expected = 0;
  for (const auto& [name, param] : params) {
    for (const OptimizerSlot& slot : rule.slots(param.shape())) {
      ++expected;
      const std::string key = name + "." + slot.name;
      auto found = state.slots.find(key);
      check(found != state.slots.end(), where, "no optimizer state '", key, "' for parameter '",
            name, "'");
      const Tensor& saved = found->second;
      check(saved.dtype() == param.dtype() && saved.shape() == slot.shape, where,
            "optimizer state '", key, "' is ", layout_str(saved), " but parameter '", name,
            "' needs ", dtype_name(param.dtype()), shape_str(slot.shape));
    }
  }
  if (state.slots.size() == expected) return;
  for (const auto& [key, tensor] : state.slots) {
    bool known = false;
    for (const auto& [name, param] : params) {
      for (const OptimizerSlot& slot : rule.slots(param.shape())) known |= key == name + "." + slot.name;
    }
    check(known, where, "optimizer state '", key, "' belongs to no parameter of the model");
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
