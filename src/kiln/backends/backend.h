// The backend contract: what every executor of graphs (reference, CPU, CUDA, PJRT) provides.
//
// A backend compiles the part of a graph that the outputs depend on into an Executable, which
// then only runs. Arguments are host tensors in the graph's input order (Graph::inputs());
// results come back in output order. A backend states per node whether it runs it; composites it
// does not support are rewritten into their decomposition by the compiler before compile().
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

class Executable {
 public:
  virtual ~Executable() = default;
  // Throws Error naming the input when an argument's dtype or shape differs from the graph's.
  virtual std::vector<Tensor> run(const std::vector<Tensor>& arguments) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Whether compile() accepts this node as it is.
  virtual bool supports(const Node& node) const = 0;
  // Throws Error naming the node of an unsupported op.
  virtual std::unique_ptr<Executable> compile(const Graph& graph,
                                              const std::vector<Value>& outputs) = 0;
};

// Checks the arguments against the graph's inputs (count, dtype, shape), naming the input.
void check_arguments(const Graph& graph, const std::vector<Tensor>& arguments);

}  // namespace kiln
