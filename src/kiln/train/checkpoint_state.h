// The training state a checkpoint carries besides the model: AdamW moments
// (optimizer.safetensors) and the position of the data order and random streams (rng_state.json).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "kiln/ir/tensor.h"

namespace kiln {

// AdamW state keyed by Hugging Face parameter name (torch's per-parameter exp_avg, exp_avg_sq).
struct AdamWState {
  int64_t step = 0;  // updates done: the next update's bias correction uses step + 1
  std::map<std::string, Tensor> exp_avg;
  std::map<std::string, Tensor> exp_avg_sq;
};

// optimizer.safetensors: tensors "<name>.exp_avg" and "<name>.exp_avg_sq", the step in the
// metadata; written atomically.
void optimizer_state_write(const std::string& path, const AdamWState& state);
// Reads it back; a tensor of another name, a parameter with one moment only, moments of
// different shapes or a missing step are errors naming the file and tensor.
AdamWState optimizer_state_read(const std::string& path);
// Checks that `state` has moments for exactly the parameters in `params`, with their shapes
// and dtypes; errors name `where` and the parameter.
void optimizer_state_check(const AdamWState& state, const std::map<std::string, Tensor>& params,
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
