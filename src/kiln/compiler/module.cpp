// Copies and rewrites of modules.
#include "kiln/compiler/module.h"

#include "kiln/ir/error.h"
#include "kiln/ir/op_registry.h"

namespace kiln {
namespace {

// Builds a module over a fresh graph that holds `source`'s inputs, then `nodes` through `rewrite`.
Module rebuild(const Graph& source, const std::vector<int32_t>& nodes,
               const std::vector<int32_t>& outputs, const NodeRewrite& rewrite) {
  Module module{std::make_unique<Graph>(), {}};
  Graph& target = *module.graph;
  std::vector<Value> mapped(static_cast<size_t>(source.size()));
  for (int32_t id : source.inputs()) {
    const Node& node = source.node(id);
    target.set_layer_mark(source.layer_mark(id));
    mapped[static_cast<size_t>(id)] = target.input(source.input_name(id), node.dtype, node.shape,
                                                   node.attr<InputAttrs>().role);
  }
  for (int32_t id : nodes) {
    const Node& node = source.node(id);
    if (node.op == OpKind::input) continue;
    target.set_layer_mark(source.layer_mark(id));  // what the rewrite builds for the node
    std::vector<Value> operands;
    operands.reserve(node.inputs.size());
    for (int32_t operand : node.inputs) operands.push_back(mapped[static_cast<size_t>(operand)]);
    Value value = rewrite ? rewrite(target, node, id, operands) : Value();
    if (!value.valid()) {
      value = target.add_node(node.op, operands, node.attrs, node.dtype, node.shape);
    }
    check(value.dtype() == node.dtype && value.shape() == node.shape, op_name(node.op),
          "rewrite of node %", id, " changed its type");
    mapped[static_cast<size_t>(id)] = value;
  }
  target.set_layer_mark(layer_mark::none);
  for (int32_t id : outputs) module.outputs.push_back(mapped[static_cast<size_t>(id)].id());
  return module;
}

}  // namespace

std::vector<Value> Module::output_values() const {
  std::vector<Value> values;
  for (int32_t id : outputs) values.push_back(graph->value(id));
  return values;
}

Module copy_module(const Graph& graph, const std::vector<Value>& outputs, bool live_only) {
  std::vector<int32_t> output_ids;
  for (const Value& output : outputs) {
    check(output.valid() && &output.graph() == &graph, "compiler",
          "an output is not a value of the graph");
    output_ids.push_back(output.id());
  }
  std::vector<int32_t> nodes;
  if (live_only) {
    nodes = live_nodes(graph, outputs);
  } else {
    for (int32_t id = 0; id < graph.size(); ++id) nodes.push_back(id);
  }
  return rebuild(graph, nodes, output_ids, nullptr);
}

Module rewrite_module(const Module& source, const NodeRewrite& rewrite) {
  std::vector<int32_t> nodes;
  for (int32_t id = 0; id < source.graph->size(); ++id) nodes.push_back(id);
  return rebuild(*source.graph, nodes, source.outputs, rewrite);
}

}  // namespace kiln
