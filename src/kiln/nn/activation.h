// Hidden activations by their Hugging Face `hidden_act` names.
#pragma once

#include <string_view>

#include "kiln/ir/graph.h"

namespace kiln {

// "gelu" (erf), "gelu_new" and "gelu_pytorch_tanh" (tanh approximation), "relu" (gradient 0 at
// 0, as torch). Throws naming the activation when unknown.
Value activation(Value x, std::string_view hidden_act);

}  // namespace kiln
