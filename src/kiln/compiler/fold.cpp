// Constant folding: a node whose operands are all constants (or iota) becomes a constant holding
// its value, computed by the reference kernels (kiln/reference_kernels: the oracle's arithmetic,
// in a layer below the compiler, so a folded program gives the oracle's results exactly).
// Left alone, as XLA's folding leaves them: random_bits and dropout (randomness stays a draw
// at run time), iota and broadcast (cheap to generate, costly to store), and results above
// kFoldLimitBytes.
#include "kiln/compiler/passes.h"
#include "kiln/ir/ops.h"
#include "kiln/reference_kernels/kernels.h"

namespace kiln {
namespace {

// Folded values are stored in the program; larger ones are cheaper to compute at run time.
constexpr int64_t kFoldLimitBytes = int64_t{1} << 16;

bool known_at_compile_time(const Value& value) {
  return value.op() == OpKind::constant || value.op() == OpKind::iota;
}

// The value of a constant, or of an iota by its kernel.
Tensor value_of(const Value& value) {
  const Node& node = value.node();
  if (node.op == OpKind::constant) return node.attr<ConstantAttrs>().value;
  return reference::evaluate_node(node, value.id(), {});
}

bool foldable(const Node& node, const std::vector<Value>& operands) {
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
