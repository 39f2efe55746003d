// Layout builders (broadcast, reshape, transpose, slice, concat, pad) and their VJP rules.
#include <numeric>

#include "kiln/ir/error.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {

using detail::list_str;

Value broadcast_in_dim(Value x, const Shape& shape, const Axes& dims) {
  const char* where = "broadcast_in_dim";
  detail::check_operands({x}, where);
  detail::check_dims(shape, where);
  const Shape& from = x.shape();
  check(static_cast<int64_t>(dims.size()) == x.rank(), where, "dims ", list_str(dims),
        " must name one output dim per dim of ", shape_str(from));
  const auto out_rank = static_cast<int64_t>(shape.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    check(dims[i] >= 0 && dims[i] < out_rank, where, "dims ", list_str(dims),
          " out of range for output ", shape_str(shape));
    check(i == 0 || dims[i] > dims[i - 1], where, "dims ", list_str(dims),
          " must be strictly increasing");
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t target = shape[static_cast<size_t>(dims[i])];
    check(from[i] == 1 || from[i] == target, where, "cannot broadcast ", shape_str(from), " to ",
          shape_str(shape), " along dims ", list_str(dims));
  }
  // Equal shapes with strictly increasing dims can only be the identity.
  if (from == shape) return x;
  return x.graph().add_node(OpKind::broadcast, {x}, BroadcastAttrs{dims}, x.dtype(), shape);
}

Value broadcast_to(Value x, const Shape& shape) {
  detail::check_operands({x}, "broadcast_to");
  const Shape& from = x.shape();
  check(from.size() <= shape.size(), "broadcast_to", "cannot broadcast ", shape_str(from), " to ",
        shape_str(shape));
  size_t offset = shape.size() - from.size();
  Axes dims(from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    check(from[i] == 1 || from[i] == shape[offset + i], "broadcast_to", "cannot broadcast ",
          shape_str(from), " to ", shape_str(shape));
    dims[i] = static_cast<int64_t>(offset + i);
  }
  return broadcast_in_dim(x, shape, dims);
}

Value reshape(Value x, const Shape& shape) {
  detail::check_operands({x}, "reshape");
  Shape out = shape;
  int64_t inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      check(inferred < 0, "reshape", "target ", shape_str(shape), " has more than one -1");
      inferred = static_cast<int64_t>(i);
      continue;
    }
    check(out[i] >= 0, "reshape", "target ", shape_str(shape), " has a negative dim");
    known *= out[i];
  }
  int64_t count = x.numel();
  if (inferred >= 0) {
    check(known != 0 && count % known == 0, "reshape", shape_str(x.shape()), " has ", count,
          " elements, target ", shape_str(shape), " does not divide");
    out[static_cast<size_t>(inferred)] = count / known;
  } else {
    check(known == count, "reshape", shape_str(x.shape()), " has ", count, " elements, target ",
          shape_str(shape), " has ", known);
  }
  if (out == x.shape()) return x;
  return x.graph().add_node(OpKind::reshape, {x}, NoAttrs{}, x.dtype(), out);
}

Value transpose(Value x, const Axes& perm) {
  detail::check_operands({x}, "transpose");
  std::vector<char> seen(static_cast<size_t>(x.rank()), 0);
  bool valid = static_cast<int64_t>(perm.size()) == x.rank();
  bool identity = true;
  Shape out;
  for (size_t i = 0; valid && i < perm.size(); ++i) {
    valid = perm[i] >= 0 && perm[i] < x.rank() && !seen[static_cast<size_t>(perm[i])];
    if (!valid) break;
    seen[static_cast<size_t>(perm[i])] = 1;
    identity = identity && perm[i] == static_cast<int64_t>(i);
    out.push_back(x.shape()[static_cast<size_t>(perm[i])]);
  }
  check(valid, "transpose", "perm ", list_str(perm), " is not a permutation of the dims of ",
        shape_str(x.shape()));
  if (identity) return x;
  return x.graph().add_node(OpKind::transpose, {x}, TransposeAttrs{perm}, x.dtype(), out);
}

Value transpose_last2(Value x) {
  detail::check_operands({x}, "transpose_last2");
  check(x.rank() >= 2, "transpose_last2", "needs rank >= 2, got ", shape_str(x.shape()));
  Axes perm(static_cast<size_t>(x.rank()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
  return transpose(x, perm);
}

Value slice(Value x, const Shape& start, const Shape& limit, const Shape& stride) {
  detail::check_operands({x}, "slice");
  const Shape& from = x.shape();
  Shape steps = stride.empty() ? Shape(from.size(), 1) : stride;
  check(start.size() == from.size() && limit.size() == from.size() && steps.size() == from.size(),
        "slice", "start ", list_str(start), ", limit ", list_str(limit), ", stride ",
        list_str(steps), " need one entry per dim of ", shape_str(from));
  Shape out(from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    check(0 <= start[i] && start[i] <= limit[i] && limit[i] <= from[i], "slice", "dim ", i,
          ": start ", start[i], ", limit ", limit[i],
          " not within 0 <= start <= limit <= ", from[i], " of ", shape_str(from));
    check(steps[i] >= 1, "slice", "dim ", i, ": stride ", steps[i], " must be >= 1");
    out[i] = (limit[i] - start[i] + steps[i] - 1) / steps[i];
  }
  // An output as large as the operand can only be all of it.
  if (out == from) return x;
  return x.graph().add_node(OpKind::slice, {x}, SliceAttrs{start, limit, steps}, x.dtype(), out);
}

Value concat(const std::vector<Value>& parts, int64_t axis) {
  check(!parts.empty(), "concat", "needs at least one part");
  detail::check_operands(parts, "concat");
  const Value& first = parts[0];
  const auto ax = static_cast<size_t>(normalize_axis(axis, first.rank(), "concat"));
  Shape out = first.shape();
  for (size_t i = 1; i < parts.size(); ++i) {
    detail::check_same_dtype(first, parts[i], "concat");
    Shape shape = parts[i].shape();
    bool fits = shape.size() == out.size();
    for (size_t d = 0; fits && d < shape.size(); ++d) fits = d == ax || shape[d] == out[d];
    check(fits, "concat", "part ", i, " ", shape_str(shape), " does not match part 0 ",
          shape_str(first.shape()), " outside axis ", ax);
    out[ax] += shape[ax];
  }
  if (parts.size() == 1) return first;
  return first.graph().add_node(OpKind::concat, parts, ConcatAttrs{static_cast<int64_t>(ax)},
                                first.dtype(), out);
}

Value pad(Value x, const Shape& low, const Shape& high, double value) {
  detail::check_operands({x}, "pad");
  const Shape& from = x.shape();
  check(low.size() == from.size() && high.size() == from.size(), "pad", "low ", list_str(low),
        ", high ", list_str(high), " need one entry per dim of ", shape_str(from));
  Shape out = from;
  for (size_t i = 0; i < from.size(); ++i) {
    check(low[i] >= 0 && high[i] >= 0, "pad", "low ", list_str(low), ", high ", list_str(high),
          " must be non-negative");
    out[i] += low[i] + high[i];
  }
  if (out == from) return x;
  return x.graph().add_node(OpKind::pad, {x}, PadAttrs{low, high, value}, x.dtype(), out);
}

// ---- VJP rules ----
namespace rules {
namespace {

bool differentiable(const VjpArgs& args) { return is_floating(args.output.dtype()); }

// Spreads g along `axis` so that element k lands at k * stride with zeros between (the inverse
// of a strided slice): reshape to [.., n, 1, ..], pad the new dim to `stride`, merge, trim the
// tail.
Value dilate(Value g, size_t axis, int64_t stride) {
  int64_t n = g.shape()[axis];
  if (stride == 1 || n <= 1) return g;
  Shape split = g.shape();
  split.insert(split.begin() + static_cast<std::ptrdiff_t>(axis) + 1, 1);
  Shape low(split.size(), 0), high(split.size(), 0);
  high[axis + 1] = stride - 1;
  Shape merged = g.shape();
  merged[axis] = n * stride;
  Value spread = reshape(pad(reshape(g, split), low, high), merged);
  Shape limit = merged;
  limit[axis] = (n - 1) * stride + 1;
  return slice(spread, Shape(merged.size(), 0), limit);
}

}  // namespace

// The one place where broadcast gradients are summed: over the new dims and the stretched ones.
std::vector<Value> vjp_broadcast(const VjpArgs& args) {
  if (!differentiable(args)) return {Value()};
  Value x = args.inputs[0];
  const Axes& dims = args.node.attr<BroadcastAttrs>().dims;
  const Shape& out = args.node.shape;
  std::vector<char> kept(out.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    auto d = static_cast<size_t>(dims[i]);
    if (x.shape()[i] == out[d]) kept[d] = 1;
  }
  Axes summed;
  for (size_t d = 0; d < out.size(); ++d) {
    if (!kept[d]) summed.push_back(static_cast<int64_t>(d));
  }
  Value g = args.cotangent;
  if (!summed.empty()) g = reduce_sum(g, summed);  // empty axes would mean "all" to the builder
  return {reshape(g, x.shape())};
}

std::vector<Value> vjp_reshape(const VjpArgs& args) {
  if (!differentiable(args)) return {Value()};
  return {reshape(args.cotangent, args.inputs[0].shape())};
}

std::vector<Value> vjp_transpose(const VjpArgs& args) {
  if (!differentiable(args)) return {Value()};
  const Axes& perm = args.node.attr<TransposeAttrs>().perm;
  Axes inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return {transpose(args.cotangent, inverse)};
}

// Zeros everywhere the slice did not read: dilate strided dims, then pad to the operand shape.
std::vector<Value> vjp_slice(const VjpArgs& args) {
  if (!differentiable(args)) return {Value()};
  const SliceAttrs& attrs = args.node.attr<SliceAttrs>();
  const Shape& from = args.inputs[0].shape();
  Value g = args.cotangent;
  for (size_t i = 0; i < from.size(); ++i) g = dilate(g, i, attrs.stride[i]);
  Shape high(from.size());
  for (size_t i = 0; i < from.size(); ++i) high[i] = from[i] - attrs.start[i] - g.shape()[i];
  return {pad(g, attrs.start, high)};
}

std::vector<Value> vjp_concat(const VjpArgs& args) {
  if (!differentiable(args)) return std::vector<Value>(args.inputs.size());
  const auto axis = static_cast<size_t>(args.node.attr<ConcatAttrs>().axis);
  const Shape& out = args.node.shape;
  std::vector<Value> grads;
  int64_t offset = 0;
  for (const Value& part : args.inputs) {
    Shape start(out.size(), 0), limit = out;
    start[axis] = offset;
    offset += part.shape()[axis];
    limit[axis] = offset;
    grads.push_back(slice(args.cotangent, start, limit));
  }
  return grads;
}

std::vector<Value> vjp_pad(const VjpArgs& args) {
  if (!differentiable(args)) return {Value()};
  const PadAttrs& attrs = args.node.attr<PadAttrs>();
  const Shape& from = args.inputs[0].shape();
  Shape limit(from.size());
  for (size_t i = 0; i < from.size(); ++i) limit[i] = attrs.low[i] + from[i];
  return {slice(args.cotangent, attrs.low, limit)};
}

}  // namespace rules
}  // namespace kiln
