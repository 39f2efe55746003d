// Internal: declarations of the VJP and decomposition rules that the ops_<family>.cpp files
// define beside their builders, generated from the op list so the registry cannot drift.
#pragma once

#include "kiln/ir/op_registry.h"

namespace kiln::rules {

#define KILN_DECLARE_vjp(name) std::vector<Value> vjp_##name(const VjpArgs& args);
#define KILN_DECLARE_novjp(name)
#define KILN_DECLARE_RULES(name, category, gradient) KILN_DECLARE_##gradient(name)
KILN_OPS(KILN_DECLARE_RULES)
#undef KILN_DECLARE_RULES
#undef KILN_DECLARE_novjp
#undef KILN_DECLARE_vjp

Value decompose_softmax(const Node& node, std::span<const Value> inputs);
Value decompose_log_softmax(const Node& node, std::span<const Value> inputs);
Value decompose_layer_norm(const Node& node, std::span<const Value> inputs);
Value decompose_layer_norm_grads(const Node& node, std::span<const Value> inputs);
Value decompose_gelu(const Node& node, std::span<const Value> inputs);
Value decompose_gelu_grad(const Node& node, std::span<const Value> inputs);
Value decompose_cross_entropy(const Node& node, std::span<const Value> inputs);
Value decompose_attention(const Node& node, std::span<const Value> inputs);
Value decompose_attention_grad(const Node& node, std::span<const Value> inputs);
Value decompose_dropout(const Node& node, std::span<const Value> inputs);

}  // namespace kiln::rules
