// Reverse-mode differentiation over the live subgraph between wrt and the outputs: cotangents are
// pulled back node by node in reverse id order with the ops' VJP rules, and through the
// decomposition of composites that have none.
#include "kiln/autodiff/grad.h"

#include <algorithm>
#include <string>

#include "kiln/autodiff/grad_internal.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"

namespace kiln::autodiff_internal {
namespace {

std::string describe(const Value& value) {
  return std::string(dtype_name(value.dtype())) + shape_str(value.shape());
}

// Nodes that depend on some wrt through floating values and that some output depends on.
std::vector<char> active_nodes(const Graph& graph, const std::vector<Value>& outputs,
                               const std::vector<Value>& wrt) {
  auto n = static_cast<size_t>(graph.size());
  std::vector<char> from_wrt(n, 0);
  std::vector<char> to_output(n, 0);
  int32_t first = graph.size();
  for (const Value& w : wrt) {
    from_wrt[static_cast<size_t>(w.id())] = 1;
    first = std::min(first, w.id());
  }
  for (int32_t id = first; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    // Integer and bool values carry no gradient, so dependence stops at them.
    if (from_wrt[static_cast<size_t>(id)] || !is_floating(node.dtype)) continue;
    for (int32_t operand : node.inputs) {
      if (from_wrt[static_cast<size_t>(operand)]) from_wrt[static_cast<size_t>(id)] = 1;
    }
  }
  for (const Value& output : outputs) to_output[static_cast<size_t>(output.id())] = 1;
  for (int32_t id = graph.size() - 1; id >= first; --id) {
    if (!to_output[static_cast<size_t>(id)]) continue;
    for (int32_t operand : graph.node(id).inputs) to_output[static_cast<size_t>(operand)] = 1;
  }
  std::vector<char> active(n, 0);
  for (size_t id = 0; id < n; ++id) active[id] = from_wrt[id] && to_output[id];
  return active;
}

// Cotangents of a composite's operands: rebuilds it from core ops and pulls the cotangent back
// through that. Each operand's total comes once, at its first position.
std::vector<Value> through_decomposition(DecomposeRule decompose, int32_t id,
                                         const std::vector<Value>& operands,
                                         const std::vector<char>& active, Value cotangent,
                                         const VjpLookup& lookup) {
  Graph& graph = cotangent.graph();
  const Node& node = graph.node(id);
  Value rebuilt = decompose(node, operands);
  check(rebuilt.dtype() == node.dtype && rebuilt.shape() == node.shape, "autodiff",
        "decomposition of '", op_name(node.op), "' (node %", id, ") gives ", describe(rebuilt),
        " for ", describe(graph.value(id)));
  std::vector<Value> targets;
  std::vector<size_t> positions;
  for (size_t i = 0; i < operands.size(); ++i) {
    bool first_use = std::none_of(operands.begin(), operands.begin() + static_cast<long>(i),
                                  [&](const Value& earlier) { return earlier.is(operands[i]); });
    if (active[static_cast<size_t>(operands[i].id())] && first_use) {
      targets.push_back(operands[i]);
      positions.push_back(i);
    }
  }
  std::vector<Value> pulled = pull_back({rebuilt}, {cotangent}, targets, lookup);
  std::vector<Value> grads(operands.size());
  for (size_t j = 0; j < positions.size(); ++j) grads[positions[j]] = pulled[j];
  return grads;
}

std::vector<Value> operand_cotangents(int32_t id, const std::vector<Value>& operands,
                                      const std::vector<char>& active, Value cotangent,
                                      const VjpLookup& lookup) {
  Graph& graph = cotangent.graph();
  const Node& node = graph.node(id);
  if (VjpRule rule = lookup(node.op)) {
    std::vector<Value> grads = rule(VjpArgs{node, graph.value(id), operands, cotangent});
    check(grads.size() == operands.size(), "autodiff", "VJP rule of '", op_name(node.op), "' gave ",
          grads.size(), " cotangents for ", operands.size(), " operands");
    return grads;
  }
  if (DecomposeRule decompose = op_info(node.op).decompose) {
    return through_decomposition(decompose, id, operands, active, cotangent, lookup);
  }
  fail("autodiff", "no VJP rule for op '", op_name(node.op), "' (node %", id, ")");
}

}  // namespace

VjpRule registry_vjp(OpKind kind) { return op_info(kind).vjp; }

std::vector<Value> pull_back(const std::vector<Value>& outputs,
                             const std::vector<Value>& cotangents, const std::vector<Value>& wrt,
                             const VjpLookup& lookup) {
  check(outputs.size() == cotangents.size(), "autodiff", outputs.size(), " outputs but ",
        cotangents.size(), " cotangents");
  if (outputs.empty()) return std::vector<Value>(wrt.size());
  Graph& graph = outputs[0].graph();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& out = outputs[i];
    const Value& cot = cotangents[i];
    check(out.valid() && &out.graph() == &graph && cot.valid() && &cot.graph() == &graph,
          "autodiff", "outputs and cotangents must be values of one graph");
    check(cot.dtype() == out.dtype() && cot.shape() == out.shape(), "autodiff", "cotangent ",
          describe(cot), " for output %", out.id(), " ", describe(out));
  }
  for (const Value& w : wrt) {
    check(w.valid() && &w.graph() == &graph, "autodiff",
          "wrt must be values of the outputs' graph");
    check(is_floating(w.dtype()), "autodiff", "wrt %", w.id(), " is ", describe(w),
          ": only floating values have gradients");
  }

  std::vector<char> active = active_nodes(graph, outputs, wrt);
  std::vector<Value> cot(active.size());
  auto accumulate = [&cot](int32_t id, Value g) {
    Value& slot = cot[static_cast<size_t>(id)];
    slot = slot.valid() ? add(slot, g) : g;
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (active[static_cast<size_t>(outputs[i].id())]) accumulate(outputs[i].id(), cotangents[i]);
  }
  for (auto id = static_cast<int32_t>(active.size()) - 1; id >= 0; --id) {
    if (!active[static_cast<size_t>(id)] || !cot[static_cast<size_t>(id)].valid()) continue;
    const Node& node = graph.node(id);
    std::vector<Value> operands;
    bool reaches_wrt = false;
    for (int32_t operand : node.inputs) {
      operands.push_back(graph.value(operand));
      reaches_wrt = reaches_wrt || active[static_cast<size_t>(operand)];
    }
    if (!reaches_wrt) continue;  // a wrt computed from values we don't differentiate
    std::vector<Value> grads =
        operand_cotangents(id, operands, active, cot[static_cast<size_t>(id)], lookup);
    for (size_t i = 0; i < operands.size(); ++i) {
      if (!active[static_cast<size_t>(operands[i].id())] || !grads[i].valid()) continue;
      check(grads[i].dtype() == operands[i].dtype() && grads[i].shape() == operands[i].shape(),
            "autodiff", "VJP of '", op_name(node.op), "' (node %", id, ") gave ",
            describe(grads[i]), " for operand %", operands[i].id(), " ", describe(operands[i]));
      accumulate(operands[i].id(), grads[i]);
    }
  }

  std::vector<Value> result;
  for (const Value& w : wrt) result.push_back(cot[static_cast<size_t>(w.id())]);
  return result;
}

std::vector<Value> grad_with(Value loss, const std::vector<Value>& wrt, const VjpLookup& lookup) {
  check(loss.valid(), "autodiff", "empty loss");
  check(is_floating(loss.dtype()) && loss.rank() == 0, "autodiff",
        "grad needs a floating scalar loss, got ", describe(loss));
  std::vector<Value> grads = pull_back({loss}, {scalar_like(loss, 1.0)}, wrt, lookup);
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (!grads[i].valid()) grads[i] = zeros_like(wrt[i]);
  }
  return grads;
}

}  // namespace kiln::autodiff_internal

namespace kiln {

std::vector<Value> grad(Value loss, const std::vector<Value>& wrt) {
  return autodiff_internal::grad_with(loss, wrt, autodiff_internal::registry_vjp);
}

std::vector<Value> vjp(const std::vector<Value>& outputs, const std::vector<Value>& cotangents,
                       const std::vector<Value>& wrt) {
  std::vector<Value> grads =
      autodiff_internal::pull_back(outputs, cotangents, wrt, autodiff_internal::registry_vjp);
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (!grads[i].valid()) grads[i] = zeros_like(wrt[i]);
  }
  return grads;
}

}  // namespace kiln
