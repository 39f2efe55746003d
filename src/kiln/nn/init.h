// Parameter initialisers drawn from the counter-based generator, so a seed gives the same
// weights on every machine and backend.
#pragma once

#include <cstdint>

#include "kiln/ir/tensor.h"

namespace kiln {

// Uniform in [-bound, bound); `stream` separates the parameters of one model.
Tensor init_uniform(DType dtype, const Shape& shape, double bound, int64_t seed, uint32_t stream);

// Normal(0, stddev) by Box-Muller over pairs of uniforms (as Hugging Face's initializer_range).
Tensor init_normal(DType dtype, const Shape& shape, double stddev, int64_t seed, uint32_t stream);

}  // namespace kiln
