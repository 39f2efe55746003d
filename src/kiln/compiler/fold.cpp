// Constant folding: a node whose operands are all constants (or iota, or broadcasts of either)
// becomes a constant holding its value, computed by the reference kernels (the oracle's
// arithmetic, in kiln/reference_kernels, a layer below the compiler: a folded program gives
// exactly the oracle's results, and the compiler still knows no backend).
// Left alone, as XLA's folding leaves them: random_bits and dropout (randomness stays a draw
// at run time), iota and broadcast themselves (cheap to generate, costly to store), results
// above kFoldLimitBytes, and collectives (all_reduce of a constant is the constant times the
// number of replicas, which the program does not know; the reference kernel is one replica's).
#include "kiln/compiler/passes.h"
#include "kiln/ir/op_registry.h"
#include "kiln/ir/ops.h"
#include "kiln/reference_kernels/kernels.h"

namespace kiln {
namespace {

// Folded values are stored in the program; larger ones are cheaper to compute at run time.
constexpr int64_t kFoldLimitBytes = int64_t{1} << 16;

// Constants, iota, and broadcasts of either: what a folded node may read.
bool known_at_compile_time(const Value& value) {
  switch (value.op()) {
    case OpKind::constant:
    case OpKind::iota:
      return true;
    case OpKind::broadcast:
      return known_at_compile_time(value.graph().value(value.node().inputs[0]));
    default:
      return false;
  }
}

// The value of a node known at compile time, iota and broadcasts by their kernels.
Tensor value_of(const Value& value) {
  const Node& node = value.node();
  if (node.op == OpKind::constant) return node.attr<ConstantAttrs>().value;
  std::vector<Tensor> operands;
  for (int32_t operand : node.inputs) operands.push_back(value_of(value.graph().value(operand)));
  return reference::evaluate_node(node, value.id(), operands);
}

bool foldable(const Node& node, const std::vector<Value>& operands) {
  if (op_info(node.op).category == OpCategory::collective) return false;
  switch (node.op) {
    case OpKind::input:
    case OpKind::constant:
    case OpKind::iota:
    case OpKind::random_bits:
    case OpKind::dropout:
    case OpKind::broadcast:
      return false;
    default:
      break;
  }
  int64_t bytes = shape_numel(node.shape) * static_cast<int64_t>(dtype_size(node.dtype));
  if (bytes > kFoldLimitBytes) return false;
  for (const Value& operand : operands) {
    if (!known_at_compile_time(operand)) return false;
  }
  return true;
}

}  // namespace

Module fold_constants(const Module& module) {
  return rewrite_module(module, [](Graph& target, const Node& node, int32_t id,
                                   const std::vector<Value>& operands) {
    if (!foldable(node, operands)) return Value();
    std::vector<Tensor> values;
    values.reserve(operands.size());
    for (const Value& operand : operands) values.push_back(value_of(operand));
    return constant(target, reference::evaluate_node(node, id, values));
  });
}

}  // namespace kiln
