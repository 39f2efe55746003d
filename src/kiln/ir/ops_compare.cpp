// Compare, select and cast builders, and the VJP rules of select and cast.
#include "kiln/ir/error.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {

Value compare(Value a, Value b, CompareDir dir) {
  detail::check_operands({a, b}, "compare");
  detail::check_same_dtype(a, b, "compare");
  std::vector<Value> operands = detail::broadcast_operands({a, b}, "compare");
  return a.graph().add_node(OpKind::compare, operands, CompareAttrs{dir}, DType::boolean,
                            operands[0].shape());
}

Value eq(Value a, Value b) { return compare(a, b, CompareDir::eq); }
Value ne(Value a, Value b) { return compare(a, b, CompareDir::ne); }
Value lt(Value a, Value b) { return compare(a, b, CompareDir::lt); }
Value le(Value a, Value b) { return compare(a, b, CompareDir::le); }
Value gt(Value a, Value b) { return compare(a, b, CompareDir::gt); }
Value ge(Value a, Value b) { return compare(a, b, CompareDir::ge); }

Value select(Value pred, Value on_true, Value on_false) {
  detail::check_operands({pred, on_true, on_false}, "select");
  check(pred.dtype() == DType::boolean, "select", "pred must be bool, got ",
        dtype_name(pred.dtype()));
  detail::check_same_dtype(on_true, on_false, "select");
  std::vector<Value> operands = detail::broadcast_operands({pred, on_true, on_false}, "select");
  return pred.graph().add_node(OpKind::select, operands, NoAttrs{}, on_true.dtype(),
                               operands[0].shape());
}

Value cast(Value x, DType dtype) {
  detail::check_operands({x}, "cast");
  if (x.dtype() == dtype) return x;
  return x.graph().add_node(OpKind::cast, {x}, NoAttrs{}, dtype, x.shape());
}

namespace rules {

// The cotangent goes to the branch each element came from; the predicate gets none.
std::vector<Value> vjp_select(const VjpArgs& args) {
  if (!is_floating(args.output.dtype())) return {Value(), Value(), Value()};
  Value pred = args.inputs[0], g = args.cotangent;
  Value zero = scalar_like(g, 0.0);
  return {Value(), select(pred, g, zero), select(pred, zero, g)};
}

std::vector<Value> vjp_cast(const VjpArgs& args) {
  DType from = args.inputs[0].dtype();
  if (!is_floating(from) || !is_floating(args.output.dtype())) return {Value()};
  return {cast(args.cotangent, from)};
}

}  // namespace rules
}  // namespace kiln
