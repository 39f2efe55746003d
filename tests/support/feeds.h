// Graph inputs created together with their random arguments, for tests that run one graph on
// several backends.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
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
  // An input holding `value` as it is (i64 values beyond 2^53, say).
  Value tensor(const Tensor& value) { return add(value.dtype(), value.shape(), value); }

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

}  // namespace kiln::testing
