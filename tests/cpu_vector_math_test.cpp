// The CPU backend's vectorisable exp and erf against libm in double, over a sweep of a million
// float bit patterns (every sign, exponent and many mantissas): within 2 and 8 ulp, with
// overflow, underflow, infinities and NaN as libm has them; the exp without its upper clamp gives
// fast_exp's own values wherever it may be used.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "kiln/backends/cpu/vector_math.h"

namespace kiln {
namespace {

// |approx - exact| in units of the last place of float at `exact`.
double ulps(float approx, double exact) {
  if (std::fabs(exact) < std::numeric_limits<float>::min()) {  // subnormal: the fixed step
    return std::fabs(approx - exact) / std::numeric_limits<float>::denorm_min();
  }
  double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(exact)) - 23);
  return std::fabs(approx - exact) / ulp;
}

TEST(CpuVectorMath, ExpAndErfWithinTheirUlpBounds) {
  double worst_exp = 0.0, worst_erf = 0.0;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4093) {
    float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    float e = cpu::fast_exp(x), r = cpu::fast_erf(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(e) && std::isnan(r) && std::isnan(cpu::fast_exp_nonpositive(x))) << x;
      continue;
    }
    if (x <= 88.75f) {
      EXPECT_EQ(std::bit_cast<uint32_t>(cpu::fast_exp_nonpositive(x)), std::bit_cast<uint32_t>(e))
          << x;
    }
    double exact_exp = std::exp(static_cast<double>(x));
    if (exact_exp > std::numeric_limits<float>::max()) {
      EXPECT_EQ(e, std::numeric_limits<float>::infinity()) << x;
    } else {
      worst_exp = std::max(worst_exp, ulps(e, exact_exp));
    }
    worst_erf = std::max(worst_erf, ulps(r, std::erf(static_cast<double>(x))));
  }
  EXPECT_LE(worst_exp, 2.0);
  EXPECT_LE(worst_erf, 8.0);
  EXPECT_EQ(cpu::fast_exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(cpu::fast_exp(0.0f), 1.0f);
  EXPECT_EQ(cpu::fast_erf(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(cpu::fast_erf(-30.0f), -1.0f);
}

}  // namespace
}  // namespace kiln
