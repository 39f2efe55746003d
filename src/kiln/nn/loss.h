// Losses of the classification heads beyond the cross_entropy op, as torch.nn computes them.
#pragma once

#include "kiln/ir/graph.h"

namespace kiln {

// torch.nn.MSELoss (mean over all elements); prediction and target of equal shape.
Value mse_loss(Value prediction, Value target);

// torch.nn.BCEWithLogitsLoss (mean over all elements), in the stable form
// max(x, 0) - x y + log(1 + exp(-|x|)); logits and float targets of equal shape.
Value bce_with_logits_loss(Value logits, Value targets);

}  // namespace kiln
