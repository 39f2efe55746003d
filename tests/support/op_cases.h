// One small random graph per op of the registry and per dtype it accepts (NaNs, ties, broadcasts,
// long rows and every reduction pattern included), shared by the backend tests that compare a
// backend op by op with the reference (cpu_ops_test, pjrt_ops_test). Cases are keyed by op so
// that a new op without one fails those tests.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "support/feeds.h"

namespace kiln::testing {

using Outputs = std::vector<Value>;

// One graph per dtype: `build` makes its outputs from inputs it adds to the feeds.
struct OpCase {
  std::vector<DType> dtypes;
  std::function<Outputs(Feeds&, DType)> build;
};

std::map<OpKind, OpCase> op_cases();

// Every op of the op list, in its order.
std::vector<OpKind> all_ops();

}  // namespace kiln::testing
