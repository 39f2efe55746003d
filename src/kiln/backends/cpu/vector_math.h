// Internal: exp and erf in float, written without branches or library calls so that loops over
// them vectorise (libm's expf/erff are scalar calls; vectorising the selects needs
// -fno-trapping-math, set for this library). Coefficients were fitted for this file
// (least squares on the reduced ranges, refined toward minimax); across all floats the results are
// within 2 ulp (exp) and 8 ulp (erf) of the exact values, and NaN propagates.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace kiln::cpu {

// e^x for x in [-104, 88.75] or NaN (fast_exp's clamps applied).
inline float exp_of_clamped(float clamped) {
  // x = n ln2 + r with |r| <= ln2/2; ln2 split so that n * kLn2High is exact.
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f;
  constexpr float kLn2Low = -2.12194440054690583e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  float shifted = clamped * kLog2e + kRound;
  float n = shifted - kRound;
  // n as an integer: the low mantissa bits of `shifted` (no float -> int conversion).
  int32_t k = std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kRound);
  float r = clamped - n * kLn2High - n * kLn2Low;
  // e^r = 1 + r + r^2 P(r)
  float p = 1.38896585607891940e-3f;
  p = p * r + 8.36764260864622200e-3f;
  p = p * r + 4.16670153149868100e-2f;
  p = p * r + 1.66665305443693930e-1f;
  p = p * r + 4.99999992269237970e-1f;
  float y = 1.0f + r + r * r * p;
  // 2^n as two factors, each a normal float for n in [-150, 128]: the second product rounds
  // once, into the subnormals or to infinity where the exact result lies there.
  int32_t half = k >> 1;
  float scale_a = std::bit_cast<float>((half + 127) << 23);
  float scale_b = std::bit_cast<float>((k - half + 127) << 23);
  return y * scale_a * scale_b;
}

inline float fast_exp(float x) {
  // The clamps use ordered compares, so NaN passes them and propagates through the arithmetic.
  // Below -104 exp rounds to 0, above 88.75 to infinity: the scaling gets both right.
  float clamped = x < -104.0f ? -104.0f : x;
  clamped = clamped > 88.75f ? 88.75f : clamped;
  return exp_of_clamped(clamped);
}

// fast_exp (the same values) for x <= 88.75, such as softmax's x - max or -x^2 / 2: without the
// upper clamp. GCC compiles fast_exp's two selects together into 9 vector instructions where one
// select takes 2: GELU's gradient on 2 M values, one AVX2 core, 3.1 -> 2.5 ms with this exp.
inline float fast_exp_nonpositive(float x) { return exp_of_clamped(x < -104.0f ? -104.0f : x); }

inline float fast_erf(float x) {
  // erf is odd: computed on |x| and given x's sign back. erf(a) = a P(a^2) / Q(a^2) on
  // [0, 3.925]; beyond, erf rounds to 1 in float. The clamps use ordered compares, so NaN passes
  // them. Clamping x itself to [-3.925, 3.925] gives the same values for every float (checked on
  // all 2^32 with the SSE4.1, AVX2 and AVX-512 builds), but GCC compiled its four selects into 18
  // vector instructions: the exact GELU on 2 M values, one AVX2 core, 1.77 -> 1.25 ms this way.
  uint32_t sign = std::bit_cast<uint32_t>(x) & 0x80000000u;
  float a = std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0x7fffffffu);
  a = a > 3.925f ? 3.925f : a;
  float t = a * a;
  float p = 2.04574932467333140e-6f;
  p = p * t + 2.84809256362423930e-4f;
  p = p * t + 3.77214000073969840e-3f;
  p = p * t + 5.27679462473215700e-2f;
  p = p * t + 1.90587685880849070e-1f;
  p = p * t + 1.12837914593548440f;
  float q = 3.80430869257671600e-5f;
  q = q * t + 1.16371149284478540e-3f;
  q = q * t + 1.49823956584152030e-2f;
  q = q * t + 1.14179715040990590e-1f;
  q = q * t + 5.02236673472577600e-1f;
  q = q * t + 1.0f;
  float y = a * p / q;
  y = y > 1.0f ? 1.0f : y;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(y) | sign);
}

// f64 computes keep libm's precision.
inline double fast_exp(double x) { return std::exp(x); }
inline double fast_exp_nonpositive(double x) { return std::exp(x); }
inline double fast_erf(double x) { return std::erf(x); }

}  // namespace kiln::cpu
