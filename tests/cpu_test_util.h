// Shared by the cpu_*_test files: graph inputs created together with their random arguments, and
// one graph run on the CPU and reference backends, every output compared within its dtype's
// tolerance.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "support/testing.h"

namespace kiln::testing {

// Inputs of a graph and the arguments to run it with, in input order.
class Feeds {
 public:
  explicit Feeds(Graph& graph, uint64_t seed = 1) : graph_(graph), rng_(seed) {}

  // Floating values uniform in [low, high); integers in [-5, 5) (u32: [0, 10)); bools 0/1.
  Value any(DType dtype, const Shape& shape, double low = -2.0, double high = 2.0) {
    if (is_floating(dtype)) return add(dtype, shape, random_tensor(rng_, dtype, shape, low, high));
    if (dtype == DType::boolean) {
      return add(dtype, shape, random_integers(rng_, dtype, shape, 0, 2));
    }
    int64_t lowest = dtype == DType::u32 ? 0 : -5;
    return add(dtype, shape, random_integers(rng_, dtype, shape, lowest, lowest + 10));
  }
  // Integers in [low, high) stored in any numeric dtype (ties for compare and max).
  Value integers(DType dtype, const Shape& shape, int64_t low, int64_t high) {
    return add(dtype, shape, random_integers(rng_, dtype, shape, low, high));
  }
  // As any(), with every third element NaN.
  Value with_nans(DType dtype, const Shape& shape) {
    Tensor values = random_tensor(rng_, dtype, shape, -2.0, 2.0);
    for (int64_t i = 0; i < values.numel(); i += 3) values.set(i, std::nan(""));
    return add(dtype, shape, values);
  }
  Value scalar(DType dtype, double value) { return add(dtype, {}, Tensor::scalar(dtype, value)); }

  Graph& graph() { return graph_; }
  std::mt19937_64& rng() { return rng_; }
  const std::vector<Tensor>& arguments() const { return arguments_; }

 private:
  Value add(DType dtype, const Shape& shape, Tensor value) {
    arguments_.push_back(std::move(value));
    return graph_.input("in" + std::to_string(arguments_.size()), dtype, shape);
  }

  Graph& graph_;
  std::mt19937_64 rng_;
  std::vector<Tensor> arguments_;
};

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

}  // namespace kiln::testing
