// The compiler pipeline: one function that runs the named passes in order, each with its switch
// in CompileOptions, and groups the result into kernels for a backend.
#pragma once

#include <vector>

#include "kiln/compiler/options.h"
#include "kiln/compiler/program.h"

namespace kiln {

// Compiles what `outputs` of `graph` compute. `donations` are requests; the Program lists those
// it honours: all of them, unless in_place is off, an input's dtype/shape differs from its
// output's, or no kernel order lets the argument be overwritten safely (schedule_kernels). Throws
// Error naming a node that cannot be compiled.
Program compile_program(const Graph& graph, const std::vector<Value>& outputs,
                        const std::vector<Donation>& donations,
                        const BackendCapabilities& capabilities, const CompileOptions& options);

}  // namespace kiln
