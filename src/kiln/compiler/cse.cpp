// Common-subexpression elimination: one node per distinct (op, operands, attributes, dtype,
// shape). Nodes are rebuilt in order, so operands are already merged when a node is looked up and
// one pass finds every repeat. Inputs are never merged (each is its own argument); constants are
// equal when their bytes are; random_bits with the same key operands and stream are the same bits.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "kiln/compiler/passes.h"

namespace kiln {
namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
}

bool same_attrs(const Attrs& a, const Attrs& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& mine) {
        using A = std::decay_t<decltype(mine)>;
        const A& theirs = std::get<A>(b);
        if constexpr (std::is_same_v<A, ConstantAttrs>) {
          return same_bytes(mine.value, theirs.value);
        } else if constexpr (std::is_same_v<A, InputAttrs>) {
          return false;
        } else {
          return mine == theirs;
        }
      },
      a);
}

bool same_node(const Node& a, const Node& b) {
  return a.op == b.op && a.dtype == b.dtype && a.shape == b.shape && a.inputs == b.inputs &&
         same_attrs(a.attrs, b.attrs);
}

uint64_t mix(uint64_t hash, uint64_t value) {
  return (hash ^ value) * 1099511628211ull;  // FNV-1a step, a word at a time
}

// Hashes what same_node compares, but attributes only through a constant's first bytes: equal
// nodes get equal hashes, and the many scalar constants of a graph spread over buckets.
uint64_t node_hash(const Node& node) {
  uint64_t hash = 14695981039346656037ull;
  hash = mix(hash, static_cast<uint64_t>(node.op));
  hash = mix(hash, static_cast<uint64_t>(node.dtype));
  for (int64_t dim : node.shape) hash = mix(hash, static_cast<uint64_t>(dim));
  for (int32_t operand : node.inputs) hash = mix(hash, static_cast<uint64_t>(operand));
  if (node.op == OpKind::constant) {
    const Tensor& value = node.attr<ConstantAttrs>().value;
    uint64_t word = 0;
    std::memcpy(&word, value.data(), std::min(value.nbytes(), sizeof(word)));
    hash = mix(hash, word);
  }
  return hash;
}

}  // namespace

Module eliminate_common_subexpressions(const Module& module) {
  std::unordered_multimap<uint64_t, int32_t> seen;  // hash -> node id in the new graph
  return rewrite_module(module, [&](Graph& target, const Node& node, int32_t,
                                    const std::vector<Value>& operands) {
    // The node as it would be built (graphs are append-only: look before adding).
    Node candidate{node.op, {}, node.attrs, node.dtype, node.shape};
    for (const Value& operand : operands) candidate.inputs.push_back(operand.id());
    uint64_t hash = node_hash(candidate);
    auto [first, last] = seen.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      if (same_node(target.node(it->second), candidate)) return target.value(it->second);
    }
    Value built = target.add_node(node.op, operands, node.attrs, node.dtype, node.shape);
    seen.emplace(hash, built.id());
    return built;
  });
}

}  // namespace kiln
