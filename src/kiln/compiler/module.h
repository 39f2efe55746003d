// A graph the compiler owns together with the values it must compute. Passes read a Module and
// build a new one (graphs are append-only); every pass keeps all inputs, in the caller's order,
// so that arguments line up with Graph::inputs() of the original graph, and every node's layer
// mark (what a rewrite builds for a node gets that node's mark).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

struct Module {
  std::unique_ptr<Graph> graph;
  std::vector<int32_t> outputs;  // node ids in `graph`, in the caller's output order

  std::vector<Value> output_values() const;
};

// A copy of `graph` with every input and either every node (`live_only` false: what a pipeline
// with dead-code elimination off keeps) or only the nodes the outputs depend on.
Module copy_module(const Graph& graph, const std::vector<Value>& outputs, bool live_only);

// How a rewrite treats one node: return the value that replaces it, built in `target` from the
// already-rewritten `operands`, or an invalid Value to copy the node unchanged.
using NodeRewrite = std::function<Value(Graph& target, const Node& node, int32_t id,
                                        const std::vector<Value>& operands)>;

// Rebuilds `source` node by node (every node, in order; inputs first) through `rewrite`. Throws an
// Error naming the node if a replacement changes its dtype or shape.
Module rewrite_module(const Module& source, const NodeRewrite& rewrite);

}  // namespace kiln
