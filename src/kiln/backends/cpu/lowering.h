// Internal: the graph a CPU executable runs — the live part of the caller's graph, copied into a
// graph the executable owns, with every composite the backend has no kernel for replaced by its
// decomposition into core ops.
#pragma once

#include <memory>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::cpu {

struct LoweredGraph {
  std::unique_ptr<Graph> graph;  // inputs in the caller's order, so arguments line up
  std::vector<int32_t> outputs;  // node ids of the outputs in `graph`
  std::vector<int32_t> live;     // the nodes the outputs depend on, in topological order
};

// `decompose_all`: run every composite through its decomposition (a debugging switch and a test
// of the decompositions on this backend).
LoweredGraph lower_graph(const Graph& graph, const std::vector<Value>& outputs,
                         bool decompose_all);

}  // namespace kiln::cpu
