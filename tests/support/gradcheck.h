// Finite-difference gradient checks: the analytic gradient of a graph (autodiff + reference
// backend) against central differences of the same graph, in float64.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kiln/ir/ops.h"

namespace kiln::testing {

// How one argument of a checked function is made.
struct ArgSpec {
  DType dtype = DType::f64;
  Shape shape;
  double low = -1.0;  // floating: uniform in [low, high); integer: integers in [low, high)
  double high = 1.0;
  bool differentiate = true;  // only floating arguments can be differentiated
  // When set, the argument's exact values (e.g. labels with ignore_index, fixed indices).
  std::vector<double> values = {};
};

using BuildFn = std::function<Value(const std::vector<Value>& args)>;

struct GradCheckResult {
  bool ok = true;
  std::string message;  // the first mismatch: argument, element, analytic vs numeric
  int checked = 0;      // elements compared
};

// Builds f(args), reduces it to a scalar with fixed random weights (so every output element
// matters), differentiates with kiln::grad and compares against central differences with step
// `step`. Elements pass when |analytic - numeric| <= atol + rtol * |numeric|.
GradCheckResult check_gradients(const std::vector<ArgSpec>& specs, const BuildFn& build,
                                std::mt19937_64& rng, double step = 1e-6, double rtol = 1e-5,
                                double atol = 1e-7);

// Op kinds of the nodes that `build` emits on arguments shaped by `specs` (for coverage checks).
std::vector<OpKind> ops_built(const std::vector<ArgSpec>& specs, const BuildFn& build);

}  // namespace kiln::testing
