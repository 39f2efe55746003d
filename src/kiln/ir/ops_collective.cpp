// Collective builders (all_reduce) and their VJP rules. A collective's value depends on every
// replica of the program, so nothing about it is known when one graph is built or compiled.
#include "kiln/ir/op_rules.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {

Value all_reduce(Value x) {
  detail::check_operands({x}, "all_reduce");
  detail::check_numeric(x, "all_reduce");
  return x.graph().add_node(OpKind::all_reduce, {x}, NoAttrs{}, x.dtype(), x.shape());
}

namespace rules {

// Every replica's output depends on every replica's operand with weight one, so each operand's
// cotangent is the sum of all replicas' cotangents: the transpose of a sum over replicas is the
// same sum (JAX's psum).
std::vector<Value> vjp_all_reduce(const VjpArgs& args) {
  if (!is_floating(args.output.dtype())) return {Value()};
  return {all_reduce(args.cotangent)};
}

}  // namespace rules
}  // namespace kiln
