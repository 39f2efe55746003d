// Shared by the cpu_*_test files: graph inputs created together with their random arguments, and
// one graph run on the CPU and reference backends, every output compared within its dtype's
// tolerance.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/compiler/buffer_plan.h"
#include "kiln/ir/ops.h"
#include "support/feeds.h"
#include "support/testing.h"

namespace kiln::testing {

struct Tolerance {
  double rtol, atol;
};

// The fast backend computes f32/bf16/f16 in float (the reference in double, rounded once), so
// results differ by an ulp or a few; sums of products (oneDNN) by their length times that.
inline Tolerance tolerance_of(DType dtype) {
  switch (dtype) {
    case DType::f32: return {1e-5, 1e-5};
    case DType::f64: return {1e-12, 1e-12};
    case DType::bf16: return {1e-2, 1e-2};
    case DType::f16: return {2e-3, 2e-3};
    default: return {0.0, 0.0};  // integers and bools are exact
  }
}

inline void expect_outputs_close(const std::vector<Tensor>& actual,
                                 const std::vector<Tensor>& expected, double scale = 1.0) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    EXPECT_EQ(actual[i].dtype(), expected[i].dtype());
    Tolerance tol = tolerance_of(expected[i].dtype());
    EXPECT_ALLCLOSE(actual[i], expected[i], tol.rtol * scale, tol.atol * scale);
  }
}

// Runs the outputs on both backends; the CPU results must match the reference's.
inline void expect_matches_reference(Graph& graph, const std::vector<Value>& outputs,
                                     const std::vector<Tensor>& arguments,
                                     CpuBackendOptions options = {}, double scale = 1.0) {
  std::vector<Tensor> expected = evaluate_reference(graph, outputs, arguments);
  std::vector<Tensor> actual = make_cpu_backend(options)->compile(graph, outputs)->run(arguments);
  expect_outputs_close(actual, expected, scale);
}

// The most bytes live at one step (each buffer rounded up to the plan's 64-byte alignment): no
// plan can do with less.
inline int64_t live_bytes_bound(const MemoryPlan& plan) {
  int64_t bound = 0;
  for (const BufferRequest& at : plan.buffers) {
    int64_t live = 0;
    for (const BufferRequest& b : plan.buffers) {
      if (b.first <= at.first && at.first <= b.last) live += (b.bytes + 63) / 64 * 64;
    }
    bound = std::max(bound, live);
  }
  return bound;
}

}  // namespace kiln::testing
