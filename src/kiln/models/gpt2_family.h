// GPT-2 as a model family (model_type "gpt2"): its config, heads and checkpoints behind the
// ModelFamily interface.
#pragma once

#include "kiln/models/model_family.h"

namespace kiln {

const ModelFamily& gpt2_family();

}  // namespace kiln
