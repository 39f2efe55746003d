// Indexing along one axis: gather and scatter_add, and their VJPs (each is the other's adjoint).
#include "kiln/ir/error.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {
namespace {

// operand.shape[:axis] + indices.shape + operand.shape[axis+1:], after checking the indices.
Shape gathered_shape(Value operand, Value indices, int64_t axis, const char* where) {
  check(indices.dtype() == DType::i32 || indices.dtype() == DType::i64, where,
        "indices must be i32 or i64, got ", dtype_name(indices.dtype()));
  const Shape& shape = operand.shape();
  Shape out(shape.begin(), shape.begin() + axis);
  out.insert(out.end(), indices.shape().begin(), indices.shape().end());
  out.insert(out.end(), shape.begin() + axis + 1, shape.end());
  return out;
}

int64_t gather_axis(Value operand, int64_t axis, const char* where) {
  check(operand.rank() >= 1, where, "operand ", shape_str(operand.shape()), " has no axis");
  return normalize_axis(axis, operand.rank(), where);
}

}  // namespace

Value gather(Value operand, Value indices, int64_t axis) {
  detail::check_operands({operand, indices}, "gather");
  axis = gather_axis(operand, axis, "gather");
  Shape shape = gathered_shape(operand, indices, axis, "gather");
  return operand.graph().add_node(OpKind::gather, {operand, indices}, GatherAttrs{axis},
                                  operand.dtype(), std::move(shape));
}

Value scatter_add(Value operand, Value indices, Value updates, int64_t axis) {
  detail::check_operands({operand, indices, updates}, "scatter_add");
  axis = gather_axis(operand, axis, "scatter_add");
  Shape expected = gathered_shape(operand, indices, axis, "scatter_add");
  detail::check_same_dtype(operand, updates, "scatter_add");
  check(updates.shape() == expected, "scatter_add", "updates ", shape_str(updates.shape()),
        " should be ", shape_str(expected), " for operand ", shape_str(operand.shape()),
        ", indices ", shape_str(indices.shape()), ", axis ", axis);
  return operand.graph().add_node(OpKind::scatter_add, {operand, indices, updates},
                                  GatherAttrs{axis}, operand.dtype(), operand.shape());
}

namespace rules {

// Each picked element's cotangent goes back to where it was picked from (duplicates add up).
std::vector<Value> vjp_gather(const VjpArgs& args) {
  int64_t axis = args.node.attr<GatherAttrs>().axis;
  Value operand = args.inputs[0];
  Value indices = args.inputs[1];
  return {scatter_add(zeros_like(operand), indices, args.cotangent, axis), Value()};
}

std::vector<Value> vjp_scatter_add(const VjpArgs& args) {
  int64_t axis = args.node.attr<GatherAttrs>().axis;
  Value indices = args.inputs[1];
  return {args.cotangent, Value(), gather(args.cotangent, indices, axis)};
}

}  // namespace rules
}  // namespace kiln
