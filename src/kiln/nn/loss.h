// Losses of the classification heads beyond the cross_entropy op, as torch.nn computes them.
#pragma once

#include "kiln/ir/graph.h"

namespace kiln {

// The elementwise terms of torch.nn.MSELoss: (prediction - target)^2; operands of equal shape.
Value squared_error(Value prediction, Value target);

// The elementwise terms of torch.nn.BCEWithLogitsLoss, in the stable form
// max(x, 0) - x y + log(1 + exp(-|x|)); logits and float targets of equal shape.
Value bce_with_logits(Value logits, Value targets);

}  // namespace kiln
