// Element types of graph values, and the bf16/f16 conversions every backend must agree on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln {

// u32 exists for random bits (Philox output); boolean is stored as one byte (0 or 1).
#define KILN_DTYPES(X) \
  X(f32, float)        \
  X(f64, double)       \
  X(bf16, uint16_t)    \
  X(f16, uint16_t)     \
  X(i32, int32_t)      \
  X(i64, int64_t)      \
  X(u32, uint32_t)     \
  X(boolean, uint8_t)

enum class DType : uint8_t {
#define KILN_DTYPE_ENUM(name, storage) name,
  KILN_DTYPES(KILN_DTYPE_ENUM)
#undef KILN_DTYPE_ENUM
};

inline constexpr int kNumDTypes = 8;

size_t dtype_size(DType dtype);
// "f32", "bf16", "bool", ...
std::string_view dtype_name(DType dtype);
// Inverse of dtype_name; throws Error naming the string when unknown.
DType dtype_from_name(std::string_view name);
bool is_floating(DType dtype);  // f32, f64, bf16, f16
bool is_integer(DType dtype);   // i32, i64, u32

// Round to nearest, ties to even; NaN stays NaN, overflow goes to infinity.
uint16_t f32_to_bf16(float value);
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);
float f16_to_f32(uint16_t bits);
// Direct f64 -> f16/bf16 rounding (no double rounding through f32).
uint16_t f64_to_bf16(double value);
uint16_t f64_to_f16(double value);

}  // namespace kiln
