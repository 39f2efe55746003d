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

Value layer_norm_grads(Value x, Value gamma, Value dy, double eps) {
  const char* where = "layer_norm_grads";
  detail::check_operands({x, gamma, dy}, where);
  detail::check_floating(x, where);
  check(x.rank() >= 1, where, "x ", shape_str(x.shape()), " has no axis");
  check(eps >= 0.0, where, "eps ", eps, " is negative");
  detail::check_same_dtype(x, dy, where);
  check(dy.shape() == x.shape(), where, "dy ", shape_str(dy.shape()), " should be x's ",
        shape_str(x.shape()));
  detail::check_same_dtype(x, gamma, where);
  check(gamma.shape() == Shape{x.dim(-1)}, where, "gamma ", shape_str(gamma.shape()),
        " should be (", x.dim(-1), ") for x ", shape_str(x.shape()));
  return add_composite(OpKind::layer_norm_grads, {x, gamma, dy}, LayerNormAttrs{eps}, x.dtype(),
                       {x.numel() + 2 * x.dim(-1)});
}

Value gelu(Value x) {
  detail::check_operands({x}, "gelu");
  detail::check_floating(x, "gelu");
  return add_composite(OpKind::gelu, {x}, NoAttrs{}, x.dtype(), x.shape());
}

Value gelu_grad(Value x, Value dy) {
  detail::check_operands({x, dy}, "gelu_grad");
  detail::check_floating(x, "gelu_grad");
  detail::check_same_dtype(x, dy, "gelu_grad");
  check(dy.shape() == x.shape(), "gelu_grad", "dy ", shape_str(dy.shape()), " should be x's ",
        shape_str(x.shape()));
  return add_composite(OpKind::gelu_grad, {x, dy}, NoAttrs{}, x.dtype(), x.shape());
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

namespace {

// Checks attention's operands; returns the scores' shape [..., Sq, Sk].
Shape check_attention(Value q, Value k, Value v, Value mask, double scale,
                      const AttentionDropout& dropout, AttentionLayout layout, const char* where) {
  detail::check_operands({q, k, v, mask}, where);
  detail::check_floating(q, where);
  detail::check_floating(mask, where);
  for (Value x : {k, v}) detail::check_same_dtype(q, x, where);
  auto shapes = [&] {
    return "q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) + ", v " +
           shape_str(v.shape()) + ": ";
  };
  int64_t min_rank = layout == AttentionLayout::seq_first ? 3 : 2;
  check(q.rank() >= min_rank && k.rank() == q.rank() && v.rank() == q.rank(), where, shapes(),
        "q, k and v need the same rank >= ", min_rank);
  // Checked as [..., H, S, D]: the seq_first dims name the same sizes.
  Shape qh = heads_first_shape(q.shape(), layout), kh = heads_first_shape(k.shape(), layout),
        vh = heads_first_shape(v.shape(), layout);
  size_t rank = qh.size();
  Shape batch(qh.begin(), qh.end() - 2);
  check(Shape(kh.begin(), kh.end() - 2) == batch && Shape(vh.begin(), vh.end() - 2) == batch,
        where, shapes(), layout == AttentionLayout::seq_first ? "batch or head dims differ"
                                                                : "batch dims differ");
  check(kh[rank - 1] == qh[rank - 1], where, shapes(), "head dims ", qh[rank - 1], " vs ",
        kh[rank - 1]);
  check(vh[rank - 2] == kh[rank - 2], where, shapes(), "key lengths ", kh[rank - 2], " vs ",
        vh[rank - 2]);
  check(std::isfinite(scale), where, "scale ", scale, " is not finite");

  Shape scores = batch;
  scores.push_back(qh[rank - 2]);
  scores.push_back(kh[rank - 2]);
  bool mask_fits = mask.rank() == q.rank();
  for (size_t i = 0; mask_fits && i < scores.size(); ++i) {
    mask_fits = mask.shape()[i] == 1 || mask.shape()[i] == scores[i];
  }
  check(mask_fits, where, "mask ", shape_str(mask.shape()), " does not fit the scores ",
        shape_str(scores));
  check(dropout.rate >= 0.0 && dropout.rate < 1.0, where, "dropout rate ", dropout.rate,
        " out of range [0, 1)");
  if (dropout.rate > 0.0) {
    detail::check_operands({dropout.seed, dropout.offset}, where);
    check(dropout.seed.dtype() == DType::i64 && dropout.seed.rank() == 0, where,
          "dropout seed must be an i64 scalar, got ", detail::type_str(dropout.seed));
    detail::check_random_offset(dropout.offset, scores, where);
  }
  return scores;
}

DType attention_out_dtype(Value q, std::optional<DType> out_dtype, const char* where) {
  DType result = out_dtype.value_or(q.dtype());
  check(is_floating(result), where, "output dtype ", dtype_name(result), " for ",
        dtype_name(q.dtype()), " operands");
  return result;
}

// The operands of an attention node: the given ones, then the dropout keys when it drops.
std::vector<Value> with_keys(std::vector<Value> operands, const AttentionDropout& dropout) {
  if (dropout.rate > 0.0) {
    operands.push_back(dropout.seed);
    operands.push_back(dropout.offset);
  }
  return operands;
}

AttentionAttrs attention_attrs(double scale, const AttentionDropout& dropout,
                               AttentionLayout layout) {
  AttentionAttrs attrs{.scale = scale, .layout = layout};
  if (dropout.rate > 0.0) {
    attrs.dropout_rate = dropout.rate;
    attrs.stream = dropout.stream;
  }
  return attrs;
}

// q's shape with its last dim v's: attention's output.
Shape attention_out_shape(Value q, Value v) {
  Shape out = q.shape();
  out.back() = v.dim(-1);
  return out;
}

}  // namespace

Shape heads_first_shape(const Shape& shape, AttentionLayout layout) {
  if (layout == AttentionLayout::heads_first) return shape;
  Shape swapped = shape;
  std::swap(swapped[swapped.size() - 3], swapped[swapped.size() - 2]);
  return swapped;
}

Value attention(Value q, Value k, Value v, Value mask, double scale,
                const AttentionDropout& dropout, std::optional<DType> out_dtype,
                AttentionLayout layout) {
  check_attention(q, k, v, mask, scale, dropout, layout, "attention");
  DType result = attention_out_dtype(q, out_dtype, "attention");
  return add_composite(OpKind::attention, with_keys({q, k, v, mask}, dropout),
                       attention_attrs(scale, dropout, layout), result, attention_out_shape(q, v));
}

Value attention_grad(Value q, Value k, Value v, Value mask, Value out, Value dout, double scale,
                     const AttentionDropout& dropout, std::optional<DType> out_dtype,
                     AttentionLayout layout) {
  const char* where = "attention_grad";
  check_attention(q, k, v, mask, scale, dropout, layout, where);
  detail::check_operands({out, dout}, where);
  detail::check_floating(out, where);
  detail::check_same_dtype(q, dout, where);
  Shape out_shape = attention_out_shape(q, v);
  for (Value x : {out, dout}) {
    check(x.shape() == out_shape, where, "output/cotangent ", shape_str(x.shape()),
          " should be ", shape_str(out_shape));
  }
  DType result = attention_out_dtype(q, out_dtype, where);
  return add_composite(OpKind::attention_grad, with_keys({q, k, v, mask, out, dout}, dropout),
                       attention_attrs(scale, dropout, layout), result,
                       {q.numel() + k.numel() + v.numel()});
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
