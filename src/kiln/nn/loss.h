// Losses of the classification heads beyond the cross_entropy op, as torch.nn computes them.
#pragma once

#include "kiln/ir/graph.h"

namespace kiln {

// The elementwise terms of torch.nn.MSELoss: (prediction - target)^2; operands of equal shape.
Value squared_error(Value prediction, Value target);

// transformers' LabelSmoother (the Trainer's label_smoothing_factor) over logits [N, C] and
// class labels [N]: (1 - epsilon) * the cross entropy of the labels that are not ignore_index
// plus epsilon * the mean over those rows and the C classes of -log_softmax. epsilon 0 is
// cross_entropy.
Value label_smoothed_cross_entropy(Value logits, Value labels, double epsilon,
                                   int64_t ignore_index = -100);

// The elementwise terms of torch.nn.BCEWithLogitsLoss, in the stable form
// max(x, 0) - x y + log(1 + exp(-|x|)); logits and float targets of equal shape.
Value bce_with_logits(Value logits, Value targets);

}  // namespace kiln
