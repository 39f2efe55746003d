// The op registry: per op kind, its name, category, VJP rule and (for composites) decomposition.
#pragma once

#include <span>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

struct VjpArgs {
  const Node& node;              // stays valid while rules append nodes (Graph keeps a deque)
  Value output;                  // the node itself, as a value
  std::span<const Value> inputs;  // its operands
  Value cotangent;               // d loss / d output, same shape and dtype as output
};

// Returns one cotangent per operand; an invalid Value means "no gradient flows to this operand"
// (integer operands, keys, indices). Shapes and dtypes equal the operands'.
using VjpRule = std::vector<Value> (*)(const VjpArgs& args);

// Rebuilds a composite node from core ops on the given operands (in the operands' graph).
using DecomposeRule = Value (*)(const Node& node, std::span<const Value> inputs);

struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpCategory category;
  VjpRule vjp;              // null: no gradient through this op (autodiff errors if one is needed)
  DecomposeRule decompose;  // non-null exactly for composites
};

const OpInfo& op_info(OpKind kind);

}  // namespace kiln
