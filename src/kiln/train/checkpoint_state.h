// The training state a checkpoint carries besides the model: the optimizer's slots
// (optimizer.safetensors) and the position of the data order and random streams (rng_state.json).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "kiln/ir/tensor.h"
#include "kiln/train/optimizer.h"

namespace kiln {

// The optimizer's per-parameter slots (torch's state names: AdamW's exp_avg and exp_avg_sq,
// Adagrad's sum, ...) keyed "<parameter>.<slot>".
struct OptimizerState {
  std::string optimizer = "adamw";  // optimizer_kind() of the --optim that made it
  int64_t step = 0;                 // updates done: the next update counts step + 1
  std::map<std::string, Tensor> slots = {};
};

// optimizer.safetensors: the slots as tensors of their key, the optimizer and step in the
// metadata; written atomically.
void optimizer_state_write(const std::string& path, const OptimizerState& state);
// Reads it back; a missing or malformed step is an error naming the file. Files without an
// "optimizer" entry are AdamW's.
OptimizerState optimizer_state_read(const std::string& path);
// Checks that `state` was made by `optimizer` (an optimizer_kind()) and holds exactly the slots
// `rule` keeps for `params`, with their shapes and dtypes; errors name `where` and the tensor.
void optimizer_state_check(const OptimizerState& state, const std::map<std::string, Tensor>& params,
                           const std::string& optimizer, const Optimizer& rule,
                           std::string_view where);

// Where the run stands in its deterministic streams: dropout is keyed by (seed, global step),
// the example order of an epoch by (data_seed, epoch).
struct RngState {
  int64_t seed = 42;
  int64_t data_seed = 42;
  int64_t epoch = 0;             // the epoch in progress, from 0
  int64_t step_in_epoch = 0;     // optimizer updates done in that epoch
  int64_t sampler_position = 0;  // examples of that epoch's order already consumed
};

// rng_state.json, written atomically.
void rng_state_write(const std::string& path, const RngState& state);
// Reads it back; missing keys or wrong types are errors naming the file and key.
RngState rng_state_read(const std::string& path);

}  // namespace kiln
