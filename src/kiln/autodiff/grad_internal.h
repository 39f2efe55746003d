// Internal: the reverse-mode engine behind grad()/vjp(), with the VJP rule lookup as a parameter
// so that tests can hide a rule without a hook in the registry.
#pragma once

#include <functional>
#include <vector>

#include "kiln/ir/op_registry.h"

namespace kiln::autodiff_internal {

using VjpLookup = std::function<VjpRule(OpKind)>;

// The registry's rules: op_info(kind).vjp.
VjpRule registry_vjp(OpKind kind);

// As vjp(), with rules found by `lookup`. A wrt the outputs do not reach gets an invalid Value.
std::vector<Value> pull_back(const std::vector<Value>& outputs,
                             const std::vector<Value>& cotangents, const std::vector<Value>& wrt,
                             const VjpLookup& lookup);

// As grad(), with rules found by `lookup`.
std::vector<Value> grad_with(Value loss, const std::vector<Value>& wrt, const VjpLookup& lookup);

}  // namespace kiln::autodiff_internal
