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

Value bce_with_logits(Value logits, Value targets) {
  check_pair(logits, targets, "bce_with_logits");
  Value zero = zeros_like(logits);
  Value softplus_neg_abs = log(exp(neg(abs(logits))) + 1.0);
  return max(logits, zero) - logits * targets + softplus_neg_abs;
}

}  // namespace kiln
