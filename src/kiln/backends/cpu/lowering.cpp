// Copies the live nodes into a new graph, decomposing the composites without a CPU kernel.
#include "kiln/backends/cpu/lowering.h"

#include "kiln/backends/cpu/kernel.h"
#include "kiln/ir/error.h"
#include "kiln/ir/op_registry.h"

namespace kiln::cpu {

LoweredGraph lower_graph(const Graph& graph, const std::vector<Value>& outputs,
                         bool decompose_all) {
  for (const Value& output : outputs) {
    check(output.valid() && &output.graph() == &graph, "cpu",
          "an output is not a value of the graph");
  }
  LoweredGraph lowered{std::make_unique<Graph>(), {}, {}};
  Graph& target = *lowered.graph;
  std::vector<Value> mapped(static_cast<size_t>(graph.size()));
  // Every input, live or not: the arguments of run() follow Graph::inputs().
  for (int32_t id : graph.inputs()) {
    const Node& node = graph.node(id);
    mapped[static_cast<size_t>(id)] = target.input(graph.input_name(id), node.dtype, node.shape,
                                                   node.attr<InputAttrs>().role);
  }
  for (int32_t id : live_nodes(graph, outputs)) {
    const Node& node = graph.node(id);
    if (node.op == OpKind::input) continue;
    std::vector<Value> operands;
    for (int32_t operand : node.inputs) operands.push_back(mapped[static_cast<size_t>(operand)]);
    const OpInfo& info = op_info(node.op);
    bool decompose = info.category == OpCategory::composite &&
                     (decompose_all || kernel_maker(node.op) == nullptr);
    Value value =
        decompose ? info.decompose(node, operands)
                  : target.add_node(node.op, operands, node.attrs, node.dtype, node.shape);
    check(value.dtype() == node.dtype && value.shape() == node.shape, op_name(node.op),
          "decomposition of node %", id, " changed its type");
    mapped[static_cast<size_t>(id)] = value;
  }
  std::vector<Value> targets;
  for (const Value& output : outputs) {
    targets.push_back(mapped[static_cast<size_t>(output.id())]);
    lowered.outputs.push_back(targets.back().id());
  }
  lowered.live = live_nodes(target, targets);
  return lowered;
}

}  // namespace kiln::cpu
