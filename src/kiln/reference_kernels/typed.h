// Internal: typed element access for the reference kernels. A kernel dispatches on the dtype once
// (visit_*), then loops over typed pointers, widening each element to its compute type (floating
// -> double, integers and bool -> int64) and narrowing each result once to the storage type.
#pragma once

#include <concepts>
#include <cstdint>
#include <vector>

#include "kiln/reference_kernels/kernel_util.h"

namespace kiln::reference {

// bf16 and f16 elements: 16-bit storage, distinct types so that templates pick their conversions.
struct Bf16 {
  uint16_t bits;
};
struct F16 {
  uint16_t bits;
};

template <typename T>
concept FloatStorage = std::same_as<T, float> || std::same_as<T, double> ||
                       std::same_as<T, Bf16> || std::same_as<T, F16>;
// Integer storage; uint8_t is the boolean dtype (0 or 1).
template <typename T>
concept IntStorage = std::same_as<T, int32_t> || std::same_as<T, int64_t> ||
                     std::same_as<T, uint32_t> || std::same_as<T, uint8_t>;

// Storage -> compute type, exactly.
inline double widen(float v) { return v; }
inline double widen(double v) { return v; }
inline double widen(Bf16 v) { return bf16_to_f32(v.bits); }
inline double widen(F16 v) { return f16_to_f32(v.bits); }
template <IntStorage T>
int64_t widen(T v) {
  return static_cast<int64_t>(v);
}

// Compute type -> storage, rounded once (bf16/f16 to nearest even).
template <FloatStorage T>
T narrow(double v) {
  if constexpr (std::same_as<T, Bf16>) {
    return {f64_to_bf16(v)};
  } else if constexpr (std::same_as<T, F16>) {
    return {f64_to_f16(v)};
  } else {
    return static_cast<T>(v);
  }
}
// int64 -> storage: integers keep the low bits (two's complement), bool is "nonzero", floating
// goes through double (an i64 beyond 2^53 rounds twice into f32, as Tensor::set does).
template <typename T>
T narrow(int64_t v) {
  if constexpr (FloatStorage<T>) {
    return narrow<T>(static_cast<double>(v));
  } else if constexpr (std::same_as<T, uint8_t>) {
    return v != 0 ? 1 : 0;
  } else {
    return static_cast<T>(v);
  }
}

// Calls f.template operator()<T>() with T the storage type of a floating dtype; other dtypes are
// an Error naming the node's op.
template <typename F>
decltype(auto) visit_floating(const Node& node, DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32: return f.template operator()<float>();
    case DType::f64: return f.template operator()<double>();
    case DType::bf16: return f.template operator()<Bf16>();
    case DType::f16: return f.template operator()<F16>();
    default: fail_dtype(node, dtype);
  }
}

// As visit_floating, for i32, i64 and u32.
template <typename F>
decltype(auto) visit_integer(const Node& node, DType dtype, F&& f) {
  switch (dtype) {
    case DType::i32: return f.template operator()<int32_t>();
    case DType::i64: return f.template operator()<int64_t>();
    case DType::u32: return f.template operator()<uint32_t>();
    default: fail_dtype(node, dtype);
  }
}

// Every dtype: floating, integer and bool (uint8_t).
template <typename F>
decltype(auto) visit_any(const Node& node, DType dtype, F&& f) {
  if (is_floating(dtype)) return visit_floating(node, dtype, f);
  if (dtype == DType::boolean) return f.template operator()<uint8_t>();
  return visit_integer(node, dtype, f);
}

// By element size only, for kernels that move elements without reading them.
template <typename F>
decltype(auto) visit_bytes(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    default: return f.template operator()<uint64_t>();
  }
}

// All elements of a floating tensor as doubles.
inline std::vector<double> widen_all(const Node& node, const Tensor& x) {
  std::vector<double> values(static_cast<size_t>(x.numel()));
  visit_floating(node, x.dtype(), [&]<typename T>() {
    const T* in = x.data_as<T>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = widen(in[i]);
  });
  return values;
}

// Stores doubles into a floating tensor of the same size, each rounded once.
inline void narrow_all(const Node& node, const std::vector<double>& values, Tensor& out) {
  visit_floating(node, out.dtype(), [&]<typename T>() {
    T* o = out.data_as<T>();
    for (size_t i = 0; i < values.size(); ++i) o[i] = narrow<T>(values[i]);
  });
}

}  // namespace kiln::reference
