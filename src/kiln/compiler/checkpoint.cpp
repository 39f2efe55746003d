// Gradient checkpointing (CompileOptions::gradient_checkpointing): the backward pass reads no
// value that a layer computes inside itself, but a copy of it, recomputed from the layer's input
// (and the weights, masks and random keys the layer reads) just before the first backward node
// that needs it. What a layer hands on to the rest of the forward pass (its output, the next
// layer's input) is kept as computed: those are the checkpoints. A layer is the nodes a model
// builder gave one layer mark (LayerMarkScope); the backward pass is the nodes marked
// layer_mark::backward. Recomputed random bits are the forward pass's bits: random_bits and
// dropout are functions of their key operands and stream alone.
#include <functional>

#include "kiln/compiler/passes.h"
#include "kiln/ir/op_registry.h"

namespace kiln {

Module recompute_layers(const Module& module) {
  const Graph& graph = *module.graph;
  auto count = static_cast<size_t>(graph.size());
  auto mark = [&](int32_t id) { return graph.layer_mark(id); };
  auto backward = [](int32_t m) { return m == layer_mark::backward || m == layer_mark::recomputed; };

  // A layer's values read outside it by the forward pass (or by the caller) are kept.
  std::vector<bool> handed_on(count, false);
  for (int32_t id = 0; id < graph.size(); ++id) {
    if (backward(mark(id))) continue;
    for (int32_t operand : graph.node(id).inputs) {
      if (mark(operand) >= 0 && mark(operand) != mark(id)) {
        handed_on[static_cast<size_t>(operand)] = true;
      }
    }
  }
  for (int32_t id : module.outputs) handed_on[static_cast<size_t>(id)] = true;
  auto recomputed_for_backward = [&](int32_t id) {
    OpKind op = graph.node(id).op;
    return mark(id) >= 0 && !handed_on[static_cast<size_t>(id)] && op != OpKind::input &&
           op != OpKind::constant && op_info(op).category != OpCategory::collective;
  };

  std::vector<int32_t> argument(count, -1);  // input node -> its position among the inputs
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    argument[static_cast<size_t>(graph.inputs()[i])] = static_cast<int32_t>(i);
  }
  std::vector<Value> mapped(count);  // source node -> its value in the new graph
  std::vector<Value> copies(count);  // source node -> its recomputed copy
  std::function<Value(Graph&, int32_t)> read_in_backward = [&](Graph& target, int32_t id) {
    auto at = static_cast<size_t>(id);
    if (argument[at] >= 0) return target.value(target.inputs()[static_cast<size_t>(argument[at])]);
    if (!recomputed_for_backward(id)) return mapped[at];
    if (!copies[at].valid()) {
      const Node& node = graph.node(id);
      std::vector<Value> operands;
      for (int32_t operand : node.inputs) operands.push_back(read_in_backward(target, operand));
      copies[at] = target.add_node(node.op, operands, node.attrs, node.dtype, node.shape);
    }
    return copies[at];
  };
  return rewrite_module(module, [&](Graph& target, const Node& node, int32_t id,
                                    const std::vector<Value>& operands) {
    std::vector<Value> reads = operands;
    if (mark(id) == layer_mark::backward) {
      LayerMarkScope recomputing(target, layer_mark::recomputed);
      for (size_t k = 0; k < reads.size(); ++k) reads[k] = read_in_backward(target, node.inputs[k]);
    }
    mapped[static_cast<size_t>(id)] =
        target.add_node(node.op, reads, node.attrs, node.dtype, node.shape);
    return mapped[static_cast<size_t>(id)];
  });
}

}  // namespace kiln
