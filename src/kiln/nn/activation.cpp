// Hidden activations: the erf GELU composite, the tanh GELU approximation, ReLU.
#include "kiln/nn/activation.h"

#include <cmath>
#include <numbers>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"

namespace kiln {

Value activation(Value x, std::string_view hidden_act) {
  if (hidden_act == "gelu") return gelu(x);
  if (hidden_act == "gelu_new" || hidden_act == "gelu_pytorch_tanh") {
    // HF's NewGELUActivation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    Value inner = (x + x * x * x * 0.044715) * std::sqrt(2.0 / std::numbers::pi);
    return x * 0.5 * (tanh(inner) + 1.0);
  }
  if (hidden_act == "relu") return select(gt(x, scalar_like(x, 0.0)), x, zeros_like(x));
  fail("activation", "unknown hidden_act '", hidden_act,
       "' (known: gelu, gelu_new, gelu_pytorch_tanh, relu)");
}

}  // namespace kiln
