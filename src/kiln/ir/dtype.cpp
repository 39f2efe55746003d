// DType facts and the round-to-nearest-even conversions to bf16 and f16.
#include "kiln/ir/dtype.h"

#include <bit>
#include <cmath>

#include "kiln/ir/error.h"

namespace kiln {

size_t dtype_size(DType dtype) {
  switch (dtype) {
#define KILN_DTYPE_SIZE(name, storage) \
  case DType::name: return sizeof(storage);
    KILN_DTYPES(KILN_DTYPE_SIZE)
#undef KILN_DTYPE_SIZE
  }
  fail("dtype", "bad dtype ", static_cast<int>(dtype));
}

std::string_view dtype_name(DType dtype) {
  if (dtype == DType::boolean) return "bool";
  switch (dtype) {
#define KILN_DTYPE_NAME(name, storage) \
  case DType::name: return #name;
    KILN_DTYPES(KILN_DTYPE_NAME)
#undef KILN_DTYPE_NAME
  }
  fail("dtype", "bad dtype ", static_cast<int>(dtype));
}

DType dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (dtype_name(static_cast<DType>(i)) == name) return static_cast<DType>(i);
  }
  fail("dtype", "unknown dtype '", name, "' (expected f32, f64, bf16, f16, i32, i64, u32, bool)");
}

bool is_floating(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f64 || dtype == DType::bf16 || dtype == DType::f16;
}

bool is_integer(DType dtype) {
  return dtype == DType::i32 || dtype == DType::i64 || dtype == DType::u32;
}

uint16_t f32_to_bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040);  // keep it a NaN
  uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t f64_to_bf16(double value) {
  if (std::isnan(value)) return 0x7FC0 | (std::signbit(value) ? 0x8000 : 0);
  // Round to bf16's 8 significant bits directly in double, then the f32 step is exact.
  if (std::isinf(value) || value == 0.0) return f32_to_bf16(static_cast<float>(value));
  int exponent;
  std::frexp(value, &exponent);  // |value| = m * 2^exponent, m in [0.5, 1)
  int quantum_exp = std::max(exponent - 8, -133);  // bf16 subnormals share f32's smallest step
  double rounded = std::ldexp(std::nearbyint(std::ldexp(value, -quantum_exp)), quantum_exp);
  if (std::fabs(rounded) > 3.3895313892515355e38) rounded = std::copysign(INFINITY, value);
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(rounded)) >> 16);
}

uint16_t f32_to_f16(float value) { return f64_to_f16(static_cast<double>(value)); }

uint16_t f64_to_f16(double value) {
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return sign | 0x7E00;
  double magnitude = std::fabs(value);
  if (magnitude >= 65520.0) return sign | 0x7C00;  // rounds to infinity
  if (magnitude < std::ldexp(1.0, -14)) {
    // Subnormal: multiples of 2^-24, rounded to nearest even.
    auto units = static_cast<uint16_t>(std::nearbyint(std::ldexp(magnitude, 24)));
    return sign | units;  // 1024 units carries into the smallest normal, as it should
  }
  int exponent;
  double mantissa = std::frexp(magnitude, &exponent);  // [0.5, 1)
  double scaled = std::nearbyint(std::ldexp(mantissa, 11));  // 1024..2048
  if (scaled == 2048.0) {
    scaled = 1024.0;
    ++exponent;
  }
  int biased = exponent - 1 + 15;
  if (biased >= 31) return sign | 0x7C00;
  return sign | static_cast<uint16_t>(biased << 10) |
         static_cast<uint16_t>(static_cast<int>(scaled) - 1024);
}

float f16_to_f32(uint16_t bits) {
  int sign = (bits & 0x8000) ? -1 : 1;
  int exponent = (bits >> 10) & 0x1F;
  int mantissa = bits & 0x3FF;
  if (exponent == 0) return static_cast<float>(sign * std::ldexp(mantissa, -24));
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return static_cast<float>(sign * std::ldexp(mantissa + 1024, exponent - 25));
}

}  // namespace kiln
