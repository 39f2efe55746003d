// The reference backend: a plain, obviously correct executor of every op, the oracle that every
// faster backend is tested against.
#pragma once

#include <memory>
#include <vector>

#include "kiln/backends/backend.h"

namespace kiln {

// Runs every op, composites included, with direct loops; floating ops are computed in double
// and rounded once to the node's dtype. Executables own a copy of the graph they run.
std::unique_ptr<Backend> make_reference_backend();

// Compiles and runs in one call: the values of `outputs` for the given arguments.
std::vector<Tensor> evaluate_reference(const Graph& graph, const std::vector<Value>& outputs,
                                       const std::vector<Tensor>& arguments);

}  // namespace kiln
