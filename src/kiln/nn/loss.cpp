// MSE and binary cross entropy with logits as graph ops.
#include "kiln/nn/loss.h"

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

void check_pair(Value a, Value b, const char* where) {
  check(a.shape() == b.shape(), where, "input ", shape_str(a.shape()), " and target ",
        shape_str(b.shape()), " differ");
  check(is_floating(b.dtype()), where, "target must be floating, not ", dtype_name(b.dtype()));
}

}  // namespace

Value squared_error(Value prediction, Value target) {
  check_pair(prediction, target, "squared_error");
  Value diff = prediction - target;
  return diff * diff;
}

Value label_smoothed_cross_entropy(Value logits, Value labels, double epsilon,
                                   int64_t ignore_index) {
  Value nll = cross_entropy(logits, labels, ignore_index);
  if (epsilon == 0.0) return nll;
  Value active = cast(ne(labels, scalar_like(labels, static_cast<double>(ignore_index))),
                      logits.dtype());
  Value row_sums = neg(reduce_sum(log_softmax(logits), {1}));  // [N]
  // As cross_entropy, a batch without labels (an empty replica) averages to 0, not NaN.
  Value count = max(reduce_sum(active), scalar_like(nll, 1.0));
  Value smoothed = reduce_sum(row_sums * active) / (count * static_cast<double>(logits.dim(1)));
  return nll * (1.0 - epsilon) + smoothed * epsilon;
}

Value bce_with_logits(Value logits, Value targets) {
  check_pair(logits, targets, "bce_with_logits");
  Value zero = zeros_like(logits);
  Value softplus_neg_abs = log(exp(neg(abs(logits))) + 1.0);
  return max(logits, zero) - logits * targets + softplus_neg_abs;
}

}  // namespace kiln
