// Sharded safetensors checkpoints: model.safetensors.index.json's weight_map names, for every
// tensor, the shard file (beside the index) that holds it.
#pragma once

#include <map>
#include <string>

#include "kiln/ir/tensor.h"

namespace kiln {

// Every tensor of the shards that `index_path` lists. Errors name the index, or the shard and
// the tensor: a shard missing, a tensor the weight_map puts in a shard that lacks it, a tensor in
// two shards.
std::map<std::string, Tensor> safetensors_read_sharded(const std::string& index_path);

}  // namespace kiln
