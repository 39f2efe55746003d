// CPU kernels of compare, select and cast, with the reference's semantics: NaN compares false but
// for ne; cast rounds once (bf16/f16 to nearest even), truncates floats to integers (saturating,
// NaN -> 0), wraps integers and maps anything to bool as "nonzero".
#include <cmath>
#include <limits>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"

namespace kiln::cpu {
namespace {

template <typename T, typename F>
Kernel compare_loop(const Node& node, int32_t id, F f) {
  int32_t a = node.inputs[0], b = node.inputs[1];
  int64_t n = shape_numel(node.shape);
  return {[=](const Buffers& buffers, std::byte*) {
    const T* x = buffers.at<T>(a);
    const T* y = buffers.at<T>(b);
    uint8_t* out = buffers.at<uint8_t>(id);
    parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(load(x[i]), load(y[i])) ? 1 : 0;
    });
  }};
}

template <typename T>
Kernel compare_typed(const Node& node, int32_t id) {
  using C = Compute<T>;
  switch (node.attr<CompareAttrs>().dir) {
    case CompareDir::eq: return compare_loop<T>(node, id, [](C a, C b) { return a == b; });
    case CompareDir::ne: return compare_loop<T>(node, id, [](C a, C b) { return a != b; });
    case CompareDir::lt: return compare_loop<T>(node, id, [](C a, C b) { return a < b; });
    case CompareDir::le: return compare_loop<T>(node, id, [](C a, C b) { return a <= b; });
    case CompareDir::gt: return compare_loop<T>(node, id, [](C a, C b) { return a > b; });
    case CompareDir::ge: return compare_loop<T>(node, id, [](C a, C b) { return a >= b; });
  }
  fail("compare", "unknown direction");
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

template <typename From, typename To>
KILN_CPU_CLONES void cast_loop(const From* in, To* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = convert<From, To>(in[i]);
}

}  // namespace

Kernel make_compare(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  DType dtype = graph.node(node.inputs[0]).dtype;
  return visit_any("compare", dtype, [&]<typename T>() { return compare_typed<T>(node, id); });
}

Kernel make_select(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  int32_t p = node.inputs[0], a = node.inputs[1], b = node.inputs[2];
  int64_t n = shape_numel(node.shape);
  return visit_bytes(node.dtype, [&]<typename T>() -> Kernel {
    return {[=](const Buffers& buffers, std::byte*) {
      const uint8_t* pred = buffers.at<uint8_t>(p);
      const T* on_true = buffers.at<T>(a);
      const T* on_false = buffers.at<T>(b);
      T* out = buffers.at<T>(id);
      parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = pred[i] != 0 ? on_true[i] : on_false[i];
      });
    }};
  });
}

Kernel make_cast(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  int32_t x = node.inputs[0];
  int64_t n = shape_numel(node.shape);
  return visit_any("cast", graph.node(x).dtype, [&]<typename From>() {
    return visit_any("cast", node.dtype, [&]<typename To>() -> Kernel {
      return {[=](const Buffers& buffers, std::byte*) {
        const From* in = buffers.at<From>(x);
        To* out = buffers.at<To>(id);
        parallel_for(n, kGrain,
                     [&](int64_t begin, int64_t end) { cast_loop(in, out, begin, end); });
      }};
    });
  });
}

}  // namespace kiln::cpu
