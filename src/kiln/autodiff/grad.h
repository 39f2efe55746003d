// Reverse-mode differentiation as a graph-to-graph transform: the gradients are new values in
// the same graph, so later compiler passes (fusion, memory planning) apply to the backward too.
#pragma once

#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

// d loss / d wrt for a scalar floating loss. A wrt the loss does not depend on gets zeros.
// Integer and bool values are not differentiated. Throws Error naming the op when a node on the
// path from wrt to loss has no VJP rule (and is no composite), before anything runs.
std::vector<Value> grad(Value loss, const std::vector<Value>& wrt);

// General form: pulls the cotangents of `outputs` back to `wrt`.
std::vector<Value> vjp(const std::vector<Value>& outputs, const std::vector<Value>& cotangents,
                       const std::vector<Value>& wrt);

}  // namespace kiln
