// Philox-based parameter initialisers.
#include "kiln/nn/init.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kiln/ir/philox.h"

namespace kiln {
namespace {

// Uniform in (0, 1) from one Philox word: 24 random bits, offset by half a step so that log()
// below never sees 0.
double uniform_open(uint32_t bits) { return ((bits >> 8) + 0.5) * 0x1p-24; }

}  // namespace

// Element i takes word i of the (seed, offset 0, stream) draw: each Philox block gives four.
Tensor init_uniform(DType dtype, const Shape& shape, double bound, int64_t seed, uint32_t stream) {
  Tensor out = Tensor::uninitialized(dtype, shape);
  const int64_t count = out.numel();
  for (int64_t first = 0; first < count; first += 4) {
    PhiloxCounter words = random_block_at(seed, 0, stream, static_cast<uint64_t>(first / 4));
    for (int64_t i = first; i < std::min(first + 4, count); ++i) {
      out.set(i, (2.0 * uniform_open(words[static_cast<size_t>(i - first)]) - 1.0) * bound);
    }
  }
  return out;
}

// Element i takes words 2i and 2i + 1, so a Philox block gives two elements. (A block per word
// had cost a from-scratch BERT-large's set-up 8-12 s of its 41-47.)
Tensor init_normal(DType dtype, const Shape& shape, double stddev, int64_t seed, uint32_t stream) {
  Tensor out = Tensor::uninitialized(dtype, shape);
  const int64_t count = out.numel();
  for (int64_t first = 0; first < count; first += 2) {
    PhiloxCounter words = random_block_at(seed, 0, stream, static_cast<uint64_t>(first / 2));
    for (int64_t i = first; i < std::min(first + 2, count); ++i) {
      size_t word = 2 * static_cast<size_t>(i - first);
      double radius = std::sqrt(-2.0 * std::log(uniform_open(words[word])));
      double angle = 2.0 * std::numbers::pi * uniform_open(words[word + 1]);
      out.set(i, stddev * radius * std::cos(angle));
    }
  }
  return out;
}

}  // namespace kiln
