// CPU kernels of the elementwise unary and binary ops: one typed loop per op and dtype, split
// across the threads for large sizes. Floating types compute in float (f64 in double), integers in
// wrapping int64, so integer results equal the reference's exactly.
#include <cmath>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/backends/cpu/vector_math.h"

namespace kiln::cpu {
namespace {

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Integer power by squaring, wrapping; a negative exponent truncates 1 / a^-b toward zero.
int64_t int_pow(int64_t base, int64_t exponent) {
  if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 == 0 ? 1 : -1) : 0;
  int64_t result = 1;
  for (; exponent > 0; exponent >>= 1) {
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
  }
  return result;
}

// max/min that propagate NaN (written as selects, so that loops vectorise).
template <typename C>
C nan_max(C a, C b) {
  return a != a ? a : b != b ? b : a > b ? a : b;
}
template <typename C>
C nan_min(C a, C b) {
  return a != a ? a : b != b ? b : a < b ? a : b;
}

template <typename T, typename F>
KILN_CPU_CLONES void unary_loop(const T* in, T* out, int64_t begin, int64_t end, F f) {
  for (int64_t i = begin; i < end; ++i) out[i] = store<T>(f(load(in[i])));
}

template <typename T, typename F>
KILN_CPU_CLONES void binary_loop(const T* x, const T* y, T* out, int64_t begin, int64_t end, F f) {
  for (int64_t i = begin; i < end; ++i) out[i] = store<T>(f(load(x[i]), load(y[i])));
}

template <typename T, typename F>
Kernel map_unary(const Node& node, int32_t id, F f) {
  int32_t x = node.inputs[0];
  int64_t n = shape_numel(node.shape);
  return {[=](const Buffers& buffers, std::byte*) {
    const T* in = buffers.at<T>(x);
    T* out = buffers.at<T>(id);
    parallel_for(n, kGrain,
                 [&](int64_t begin, int64_t end) { unary_loop(in, out, begin, end, f); });
  }};
}

template <typename T, typename F>
Kernel map_binary(const Node& node, int32_t id, F f) {
  int32_t a = node.inputs[0], b = node.inputs[1];
  int64_t n = shape_numel(node.shape);
  return {[=](const Buffers& buffers, std::byte*) {
    const T* x = buffers.at<T>(a);
    const T* y = buffers.at<T>(b);
    T* out = buffers.at<T>(id);
    parallel_for(n, kGrain,
                 [&](int64_t begin, int64_t end) { binary_loop(x, y, out, begin, end, f); });
  }};
}

template <typename T>
Kernel unary_typed(const Node& node, int32_t id) {
  using C = Compute<T>;
  constexpr bool floating = std::floating_point<C>;
  switch (node.op) {
    case OpKind::neg:
      return map_unary<T>(node, id, [](C x) -> C {
        if constexpr (floating) return -x;
        else return wrap_sub(0, x);
      });
    case OpKind::abs:
      return map_unary<T>(node, id, [](C x) -> C {
        if constexpr (floating) return std::fabs(x);
        else return x < 0 ? wrap_sub(0, x) : x;
      });
    case OpKind::sign:  // sign(0) keeps the zero (and its sign), NaN stays NaN
      return map_unary<T>(node, id, [](C x) -> C { return x > 0 ? C(1) : x < 0 ? C(-1) : x; });
    case OpKind::logical_not:
      return map_unary<T>(node, id, [](C x) -> C { return x == 0; });
    default:
      break;
  }
  if constexpr (floating) {
    switch (node.op) {
      case OpKind::exp: return map_unary<T>(node, id, [](C x) { return fast_exp(x); });
      case OpKind::log: return map_unary<T>(node, id, [](C x) { return std::log(x); });
      case OpKind::tanh: return map_unary<T>(node, id, [](C x) { return std::tanh(x); });
      case OpKind::logistic:
        return map_unary<T>(node, id, [](C x) { return C(1) / (C(1) + fast_exp(-x)); });
      case OpKind::sqrt: return map_unary<T>(node, id, [](C x) { return std::sqrt(x); });
      case OpKind::rsqrt: return map_unary<T>(node, id, [](C x) { return C(1) / std::sqrt(x); });
      case OpKind::erf: return map_unary<T>(node, id, [](C x) { return fast_erf(x); });
      default: break;
    }
  }
  fail(op_name(node.op), "the CPU kernel does not accept ", dtype_name(node.dtype));
}

// Integer division truncates toward zero; a zero divisor is an Error, found before the loop.
template <typename T>
Kernel integer_div(const Node& node, int32_t id) {
  Kernel divide = map_binary<T>(node, id, [](int64_t a, int64_t b) {
    return b == -1 ? wrap_sub(0, a) : a / b;  // INT64_MIN / -1 wraps
  });
  int32_t divisor = node.inputs[1];
  int64_t n = shape_numel(node.shape);
  return {[=](const Buffers& buffers, std::byte* scratch) {
    const T* y = buffers.at<T>(divisor);
    for (int64_t i = 0; i < n; ++i) check(y[i] != 0, "div", "integer division by zero");
    divide.run(buffers, scratch);
  }};
}

template <typename T>
Kernel binary_typed(const Node& node, int32_t id) {
  using C = Compute<T>;
  constexpr bool floating = std::floating_point<C>;
  switch (node.op) {
    case OpKind::add:
      return map_binary<T>(node, id, [](C a, C b) -> C {
        if constexpr (floating) return a + b;
        else return wrap_add(a, b);
      });
    case OpKind::sub:
      return map_binary<T>(node, id, [](C a, C b) -> C {
        if constexpr (floating) return a - b;
        else return wrap_sub(a, b);
      });
    case OpKind::mul:
      return map_binary<T>(node, id, [](C a, C b) -> C {
        if constexpr (floating) return a * b;
        else return wrap_mul(a, b);
      });
    case OpKind::div:
      if constexpr (floating) return map_binary<T>(node, id, [](C a, C b) { return a / b; });
      else return integer_div<T>(node, id);
    case OpKind::max: return map_binary<T>(node, id, nan_max<C>);
    case OpKind::min: return map_binary<T>(node, id, nan_min<C>);
    case OpKind::pow:
      return map_binary<T>(node, id, [](C a, C b) -> C {
        if constexpr (floating) return std::pow(a, b);
        else return int_pow(a, b);
      });
    case OpKind::logical_and: return map_binary<T>(node, id, [](C a, C b) -> C { return a && b; });
    case OpKind::logical_or: return map_binary<T>(node, id, [](C a, C b) -> C { return a || b; });
    default: fail(op_name(node.op), "is not a binary op");
  }
}

}  // namespace

Kernel make_unary(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  return visit_any(op_name(node.op), node.dtype,
                   [&]<typename T>() { return unary_typed<T>(node, id); });
}

Kernel make_binary(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  return visit_any(op_name(node.op), node.dtype,
                   [&]<typename T>() { return binary_typed<T>(node, id); });
}

}  // namespace kiln::cpu
