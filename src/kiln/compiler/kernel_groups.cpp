// Kernel groups without fusion: one per node that computes something.
#include "kiln/compiler/passes.h"

#include <algorithm>

#include "kiln/compiler/views.h"

namespace kiln {

std::vector<KernelGroup> single_node_kernels(const Module& module) {
  const Graph& graph = *module.graph;
  std::vector<bool> read_later(static_cast<size_t>(graph.size()), false);
  for (const Node& node : graph.nodes()) {
    for (int32_t operand : node.inputs) read_later[static_cast<size_t>(operand)] = true;
  }
  for (int32_t id : module.outputs) read_later[static_cast<size_t>(id)] = true;
  std::vector<KernelGroup> kernels;
  for (int32_t id = 0; id < graph.size(); ++id) {
    OpKind op = graph.node(id).op;
    // Inputs and constants are buffers already; a view is its operand's bytes.
    if (op == OpKind::input || op == OpKind::constant || view_offset(graph, id)) continue;
    KernelGroup group{KernelKind::single, {id}, {}};
    if (read_later[static_cast<size_t>(id)]) group.results.push_back(id);
    kernels.push_back(std::move(group));
  }
  return kernels;
}

}  // namespace kiln
