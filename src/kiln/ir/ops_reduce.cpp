// Reduction builders (sum, max, mean) and the VJP rules of reduce_sum and reduce_max.
#include <algorithm>

#include "kiln/ir/error.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {
namespace {

// Non-negative, sorted, unique; empty means every axis.
Axes normalize_axes(const Value& x, const Axes& axes, const char* where) {
  Axes out;
  if (axes.empty()) {
    for (int64_t i = 0; i < x.rank(); ++i) out.push_back(i);
    return out;
  }
  for (int64_t axis : axes) out.push_back(normalize_axis(axis, x.rank(), where));
  std::sort(out.begin(), out.end());
  check(std::adjacent_find(out.begin(), out.end()) == out.end(), where, "axes ",
        detail::list_str(axes), " name a dim of ", shape_str(x.shape()), " twice");
  return out;
}

// Output dims of x that survive reducing `axes` (sorted), i.e. where the result's dims go back to.
Axes kept_dims(int64_t rank, const Axes& axes) {
  Axes kept;
  for (int64_t i = 0; i < rank; ++i) {
    if (!std::binary_search(axes.begin(), axes.end(), i)) kept.push_back(i);
  }
  return kept;
}

Value reduce(OpKind op, const char* where, Value x, const Axes& axes, bool keepdims) {
  detail::check_operands({x}, where);
  detail::check_numeric(x, where);
  Axes reduced = normalize_axes(x, axes, where);
  if (reduced.empty()) return x;  // a scalar: nothing to reduce
  Shape out, kept_shape = x.shape();
  for (int64_t i : kept_dims(x.rank(), reduced)) out.push_back(x.shape()[static_cast<size_t>(i)]);
  for (int64_t axis : reduced) kept_shape[static_cast<size_t>(axis)] = 1;
  Value result = x.graph().add_node(op, {x}, ReduceAttrs{reduced}, x.dtype(), out);
  return keepdims ? reshape(result, kept_shape) : result;
}

}  // namespace

Value reduce_sum(Value x, const Axes& axes, bool keepdims) {
  return reduce(OpKind::reduce_sum, "reduce_sum", x, axes, keepdims);
}

Value reduce_max(Value x, const Axes& axes, bool keepdims) {
  detail::check_operands({x}, "reduce_max");
  for (int64_t axis : normalize_axes(x, axes, "reduce_max")) {
    check(x.shape()[static_cast<size_t>(axis)] > 0, "reduce_max", "cannot reduce empty axis ", axis,
          " of ", shape_str(x.shape()));
  }
  return reduce(OpKind::reduce_max, "reduce_max", x, axes, keepdims);
}

Value mean(Value x, const Axes& axes, bool keepdims) {
  detail::check_operands({x}, "mean");
  detail::check_floating(x, "mean");
  int64_t count = 1;
  for (int64_t axis : normalize_axes(x, axes, "mean"))
    count *= x.shape()[static_cast<size_t>(axis)];
  Value sum = reduce_sum(x, axes, keepdims);
  return count == 1 ? sum : sum / static_cast<double>(count);
}

namespace rules {

std::vector<Value> vjp_reduce_sum(const VjpArgs& args) {
  if (!is_floating(args.output.dtype())) return {Value()};
  const Value& x = args.inputs[0];
  Axes kept = kept_dims(x.rank(), args.node.attr<ReduceAttrs>().axes);
  return {broadcast_in_dim(args.cotangent, x.shape(), kept)};
}

// Tied maxima share the cotangent equally, as torch.amax.
std::vector<Value> vjp_reduce_max(const VjpArgs& args) {
  if (!is_floating(args.output.dtype())) return {Value()};
  const Value& x = args.inputs[0];
  const Axes& axes = args.node.attr<ReduceAttrs>().axes;
  if (axes.empty()) return {args.cotangent};
  Axes kept = kept_dims(x.rank(), axes);
  Value peak = broadcast_in_dim(args.output, x.shape(), kept);
  Value mask = cast(eq(x, peak), x.dtype());
  Value share = args.cotangent / reduce_sum(mask, axes);
  return {mask * broadcast_in_dim(share, x.shape(), kept)};
}

}  // namespace rules
}  // namespace kiln
