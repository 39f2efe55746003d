// Builders of the composite ops: they validate and record one node; the decompositions into core
// ops (their gradient and test oracle) are in ops_composite_decompose.cpp.
#include <cmath>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {
namespace {

Value add_composite(OpKind op, const std::vector<Value>& inputs, Attrs attrs, DType dtype,
                    Shape shape) {
  return inputs[0].graph().add_node(op, inputs, std::move(attrs), dtype, std::move(shape));
}

Value softmax_like(OpKind op, const char* where, Value x, int64_t axis) {
  detail::check_operands({x}, where);
  detail::check_floating(x, where);
  check(x.rank() >= 1, where, "x ", shape_str(x.shape()), " has no axis");
  axis = normalize_axis(axis, x.rank(), where);
  return add_composite(op, {x}, SoftmaxAttrs{axis}, x.dtype(), x.shape());
}

}  // namespace

Value softmax(Value x, int64_t axis) { return softmax_like(OpKind::softmax, "softmax", x, axis); }

Value log_softmax(Value x, int64_t axis) {
  return softmax_like(OpKind::log_softmax, "log_softmax", x, axis);
}

Value layer_norm(Value x, Value gamma, Value beta, double eps) {
  detail::check_operands({x, gamma, beta}, "layer_norm");
  detail::check_floating(x, "layer_norm");
  check(x.rank() >= 1, "layer_norm", "x ", shape_str(x.shape()), " has no axis");
  check(eps >= 0.0, "layer_norm", "eps ", eps, " is negative");
  Shape param{x.dim(-1)};
  for (Value p : {gamma, beta}) {
    detail::check_same_dtype(x, p, "layer_norm");
    check(p.shape() == param, "layer_norm", "gamma/beta ", shape_str(p.shape()), " should be ",
          shape_str(param), " for x ", shape_str(x.shape()));
  }
  return add_composite(OpKind::layer_norm, {x, gamma, beta}, LayerNormAttrs{eps}, x.dtype(),
                       x.shape());
}

Value gelu(Value x) {
  detail::check_operands({x}, "gelu");
  detail::check_floating(x, "gelu");
  return add_composite(OpKind::gelu, {x}, NoAttrs{}, x.dtype(), x.shape());
}

Value cross_entropy(Value logits, Value labels, int64_t ignore_index) {
  detail::check_operands({logits, labels}, "cross_entropy");
  detail::check_floating(logits, "cross_entropy");
  check(logits.rank() == 2, "cross_entropy", "logits ", shape_str(logits.shape()),
        " should be [N, C]");
  check(labels.dtype() == DType::i32 || labels.dtype() == DType::i64, "cross_entropy",
        "labels must be i32 or i64, got ", dtype_name(labels.dtype()));
  check(labels.shape() == Shape{logits.dim(0)}, "cross_entropy", "labels ",
        shape_str(labels.shape()), " should be (", logits.dim(0), ") for logits ",
        shape_str(logits.shape()));
  return add_composite(OpKind::cross_entropy, {logits, labels}, CrossEntropyAttrs{ignore_index},
                       logits.dtype(), {});
}

Value attention(Value q, Value k, Value v, Value mask, double scale) {
  detail::check_operands({q, k, v, mask}, "attention");
  detail::check_floating(q, "attention");
  for (Value x : {k, v, mask}) detail::check_same_dtype(q, x, "attention");
  auto shapes = [&] {
    return "q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) + ", v " +
           shape_str(v.shape()) + ": ";
  };
  check(q.rank() >= 2 && k.rank() == q.rank() && v.rank() == q.rank(), "attention", shapes(),
        "q, k and v need the same rank >= 2");
  Shape batch(q.shape().begin(), q.shape().end() - 2);
  check(Shape(k.shape().begin(), k.shape().end() - 2) == batch &&
            Shape(v.shape().begin(), v.shape().end() - 2) == batch,
        "attention", shapes(), "batch dims differ");
  check(k.dim(-1) == q.dim(-1), "attention", shapes(), "head dims ", q.dim(-1), " vs ", k.dim(-1));
  check(v.dim(-2) == k.dim(-2), "attention", shapes(), "key lengths ", k.dim(-2), " vs ",
        v.dim(-2));
  check(std::isfinite(scale), "attention", "scale ", scale, " is not finite");

  Shape scores = batch;
  scores.push_back(q.dim(-2));
  scores.push_back(k.dim(-2));
  bool mask_fits = mask.rank() == q.rank();
  for (size_t i = 0; mask_fits && i < scores.size(); ++i) {
    mask_fits = mask.shape()[i] == 1 || mask.shape()[i] == scores[i];
  }
  check(mask_fits, "attention", "mask ", shape_str(mask.shape()), " does not fit the scores ",
        shape_str(scores));

  Shape out = batch;
  out.push_back(q.dim(-2));
  out.push_back(v.dim(-1));
  return add_composite(OpKind::attention, {q, k, v, mask}, AttentionAttrs{scale}, q.dtype(),
                       std::move(out));
}

Value dropout(Value x, Value seed, Value offset, double rate, uint32_t stream) {
  detail::check_operands({x, seed, offset}, "dropout");
  detail::check_floating(x, "dropout");
  check(seed.dtype() == DType::i64 && seed.rank() == 0, "dropout",
        "seed must be an i64 scalar, got ", detail::type_str(seed));
  detail::check_random_offset(offset, x.shape(), "dropout");
  check(rate >= 0.0 && rate < 1.0, "dropout", "rate ", rate, " out of range [0, 1)");
  if (rate == 0.0) return x;
  return add_composite(OpKind::dropout, {x, seed, offset}, DropoutAttrs{rate, stream}, x.dtype(),
                       x.shape());
}

}  // namespace kiln
