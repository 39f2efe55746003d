// Internal: element storage of the CPU kernels and their compute types. f32, bf16 and f16 compute
// in float (a fast backend's contract: results within fp32 tolerance of the reference), f64 in
// double, integers and bool in int64 (wrapping as the reference does). Dispatch on the dtype
// happens once, when a kernel is built; the loops then see plain typed pointers.
#pragma once

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>

#include "kiln/ir/dtype.h"
#include "kiln/ir/error.h"

namespace kiln::cpu {

// 16-bit floats as distinct types, so that templates pick their conversions.
struct Bf16 {
  uint16_t bits;
};
struct F16 {
  uint16_t bits;
};

template <typename T>
concept HalfStorage = std::same_as<T, Bf16> || std::same_as<T, F16>;
template <typename T>
concept FloatStorage = std::same_as<T, float> || std::same_as<T, double> || HalfStorage<T>;
// uint8_t is the boolean dtype (0 or 1).
template <typename T>
concept IntStorage = std::same_as<T, int32_t> || std::same_as<T, int64_t> ||
                     std::same_as<T, uint32_t> || std::same_as<T, uint8_t>;

template <typename T>
struct ComputeOf {
  using type = int64_t;
};
template <>
struct ComputeOf<float> {
  using type = float;
};
template <>
struct ComputeOf<Bf16> {
  using type = float;
};
template <>
struct ComputeOf<F16> {
  using type = float;
};
template <>
struct ComputeOf<double> {
  using type = double;
};
template <typename T>
using Compute = typename ComputeOf<T>::type;

inline float load(float v) { return v; }
inline double load(double v) { return v; }
inline float load(Bf16 v) { return std::bit_cast<float>(static_cast<uint32_t>(v.bits) << 16); }
inline float load(F16 v) { return f16_to_f32(v.bits); }
template <IntStorage T>
int64_t load(T v) {
  return static_cast<int64_t>(v);
}

// f32 -> bf16 rounded to nearest even, NaN kept a NaN: f32_to_bf16 of dtype.cpp, inline so that
// loops storing bf16 vectorise.
inline uint16_t round_bf16(float value) {
  auto bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// round_bf16 widened back to f32 in 32-bit integer arithmetic alone, which vectorises without
// packing words: the bits rounded (or the NaN quieted), the low half cleared.
inline float rounded_to_bf16(float value) {
  auto bits = std::bit_cast<uint32_t>(value);
  bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  uint32_t rounded = nan ? bits | 0x00400000u : bits + 0x7FFFu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(rounded & 0xFFFF0000u);
}

// Compute value -> storage, rounded once. Integers keep the low bits, bool is "nonzero", an
// integer stored into a floating type goes through double (as the reference does).
template <typename T, typename C>
T store(C v) {
  if constexpr (std::same_as<T, Bf16>) {
    return {round_bf16(static_cast<float>(v))};
  } else if constexpr (std::same_as<T, F16>) {
    return {f32_to_f16(static_cast<float>(v))};
  } else if constexpr (std::same_as<T, uint8_t>) {
    return v != 0 ? 1 : 0;
  } else if constexpr (FloatStorage<T> && std::integral<C>) {
    return static_cast<T>(static_cast<double>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Float -> integer: truncates toward zero, saturates at the dtype's range, NaN gives 0.
template <typename To>
To float_to_int(double value) {
  if (std::isnan(value)) return 0;
  value = std::trunc(value);
  if constexpr (std::same_as<To, int64_t>) {
    if (value <= -0x1p63) return std::numeric_limits<int64_t>::min();
    if (value >= 0x1p63) return std::numeric_limits<int64_t>::max();
  } else {
    if (value <= static_cast<double>(std::numeric_limits<To>::min())) {
      return std::numeric_limits<To>::min();
    }
    if (value >= static_cast<double>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
  }
  return static_cast<To>(value);
}

// The cast of one element, with the reference's semantics: rounds once (bf16/f16 to nearest even),
// truncates floats to integers (saturating, NaN -> 0), wraps integers, maps anything to bool as
// "nonzero".
template <typename From, typename To>
To convert(From x) {
  if constexpr (!FloatStorage<From>) {
    return store<To>(load(x));  // integers wrap, bool is nonzero, -> floating through double
  } else if constexpr (std::same_as<To, uint8_t>) {
    return load(x) != 0 ? 1 : 0;  // NaN is nonzero
  } else if constexpr (IntStorage<To>) {
    return float_to_int<To>(static_cast<double>(load(x)));
  } else if constexpr (std::same_as<From, double> && std::same_as<To, Bf16>) {
    return {f64_to_bf16(x)};  // directly, not through f32 (no double rounding)
  } else if constexpr (std::same_as<From, double> && std::same_as<To, F16>) {
    return {f64_to_f16(x)};
  } else if constexpr (std::same_as<To, double>) {
    return static_cast<double>(load(x));
  } else {
    return store<To>(static_cast<float>(load(x)));
  }
}

// Calls f.template operator()<T>() with T the storage type of `dtype`; dtypes outside the family
// are an Error naming `where`.
template <typename F>
decltype(auto) visit_floating(std::string_view where, DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32: return f.template operator()<float>();
    case DType::f64: return f.template operator()<double>();
    case DType::bf16: return f.template operator()<Bf16>();
    case DType::f16: return f.template operator()<F16>();
    default: fail(where, "the CPU kernel does not accept ", dtype_name(dtype));
  }
}

template <typename F>
decltype(auto) visit_integer(std::string_view where, DType dtype, F&& f) {
  switch (dtype) {
    case DType::i32: return f.template operator()<int32_t>();
    case DType::i64: return f.template operator()<int64_t>();
    case DType::u32: return f.template operator()<uint32_t>();
    default: fail(where, "the CPU kernel does not accept ", dtype_name(dtype));
  }
}

// Numeric dtypes (floating and integer).
template <typename F>
decltype(auto) visit_numeric(std::string_view where, DType dtype, F&& f) {
  if (is_floating(dtype)) return visit_floating(where, dtype, f);
  return visit_integer(where, dtype, f);
}

// Every dtype, bool included.
template <typename F>
decltype(auto) visit_any(std::string_view where, DType dtype, F&& f) {
  if (dtype == DType::boolean) return f.template operator()<uint8_t>();
  return visit_numeric(where, dtype, f);
}

// By element size only (1, 2, 4 or 8 bytes), for kernels that move elements without reading them.
template <typename F>
decltype(auto) visit_bytes_of_size(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    default: return f.template operator()<uint64_t>();
  }
}

template <typename F>
decltype(auto) visit_bytes(DType dtype, F&& f) {
  return visit_bytes_of_size(dtype_size(dtype), f);
}

}  // namespace kiln::cpu
