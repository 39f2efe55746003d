// Philox-based parameter initialisers.
#include "kiln/nn/init.h"

#include <cmath>
#include <numbers>

#include "kiln/ir/philox.h"

namespace kiln {
namespace {

// Uniform in (0, 1): 24 random bits, offset by half a step so that log() below never sees 0.
double uniform_open(int64_t seed, uint32_t stream, int64_t index) {
  uint32_t bits = random_bits_at(seed, /*offset=*/0, stream, index);
  return ((bits >> 8) + 0.5) * 0x1p-24;
}

}  // namespace

Tensor init_uniform(DType dtype, const Shape& shape, double bound, int64_t seed, uint32_t stream) {
  Tensor out(dtype, shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    out.set(i, (2.0 * uniform_open(seed, stream, i) - 1.0) * bound);
  }
  return out;
}

Tensor init_normal(DType dtype, const Shape& shape, double stddev, int64_t seed, uint32_t stream) {
  Tensor out(dtype, shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    double radius = std::sqrt(-2.0 * std::log(uniform_open(seed, stream, 2 * i)));
    double angle = 2.0 * std::numbers::pi * uniform_open(seed, stream, 2 * i + 1);
    out.set(i, stddev * radius * std::cos(angle));
  }
  return out;
}

}  // namespace kiln
