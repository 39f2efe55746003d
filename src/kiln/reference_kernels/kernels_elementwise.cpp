// Reference kernels of the elementwise unary and binary ops: floating values computed in double
// and rounded once to the dtype, integers in int64 and wrapped to the dtype, bools as 0/1.
#include <cmath>
#include <limits>

#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"
#include "kiln/ir/error.h"

namespace kiln::reference {
namespace {

// out[i] = float_op(x[i]) in double, rounded once to x's dtype.
template <typename FloatOp>
Tensor unary_floating(const Node& node, const Tensor& x, FloatOp float_op) {
  Tensor out(x.dtype(), node.shape);
  visit_floating(node, x.dtype(), [&]<typename T>() {
    const T* in = x.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = narrow<T>(float_op(widen(in[i])));
  });
  return out;
}

template <typename FloatOp, typename IntOp>
Tensor unary_numeric(const Node& node, const Tensor& x, FloatOp float_op, IntOp int_op) {
  if (is_floating(x.dtype())) return unary_floating(node, x, float_op);
  Tensor out(x.dtype(), node.shape);
  visit_integer(node, x.dtype(), [&]<typename T>() {
    const T* in = x.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = narrow<T>(int_op(widen(in[i])));
  });
  return out;
}

template <typename FloatOp, typename IntOp>
Tensor binary_numeric(const Node& node, Operands operands, FloatOp float_op, IntOp int_op) {
  const Tensor& a = operands[0];
  const Tensor& b = operands[1];
  Tensor out(a.dtype(), node.shape);
  auto loop = [&]<typename T>(auto op) {
    const T* x = a.data_as<T>();
    const T* y = b.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = narrow<T>(op(widen(x[i]), widen(y[i])));
  };
  if (is_floating(a.dtype())) {
    visit_floating(node, a.dtype(), [&]<typename T>() { loop.template operator()<T>(float_op); });
  } else {
    visit_integer(node, a.dtype(), [&]<typename T>() { loop.template operator()<T>(int_op); });
  }
  return out;
}

template <typename BoolOp>
Tensor logical(const Node& node, Operands operands, BoolOp bool_op) {
  for (const Tensor& operand : operands) {
    if (operand.dtype() != DType::boolean) fail_dtype(node, operand.dtype());
  }
  Tensor out(DType::boolean, node.shape);
  const uint8_t* a = operands[0].data_as<uint8_t>();
  const uint8_t* b = operands.size() > 1 ? operands[1].data_as<uint8_t>() : nullptr;
  uint8_t* o = out.data_as<uint8_t>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    o[i] = bool_op(a[i] != 0, b != nullptr && b[i] != 0) ? 1 : 0;
  }
  return out;
}

// Integer power by squaring, wrapping; a negative exponent truncates 1 / a^-b toward zero.
int64_t int_pow(int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return exponent % 2 == 0 ? 1 : -1;
    return 0;
  }
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

double nan_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}

double nan_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : b;
}

}  // namespace

Tensor kernel_neg(const Node& node, Operands operands) {
  return unary_numeric(
      node, operands[0], [](double x) { return -x; }, wrap_neg);
}

Tensor kernel_abs(const Node& node, Operands operands) {
  return unary_numeric(
      node, operands[0], [](double x) { return std::fabs(x); },
      [](int64_t x) { return x < 0 ? wrap_neg(x) : x; });
}

// sign(0) = 0 (keeping the zero's sign for floats) and sign(NaN) = NaN.
Tensor kernel_sign(const Node& node, Operands operands) {
  return unary_numeric(
      node, operands[0], [](double x) { return x > 0   ? 1.0
                                               : x < 0 ? -1.0
                                                       : x; },
      [](int64_t x) -> int64_t { return x > 0   ? 1
                                        : x < 0 ? -1
                                                : 0; });
}

Tensor kernel_exp(const Node& node, Operands operands) {
  return unary_floating(node, operands[0], [](double x) { return std::exp(x); });
}

Tensor kernel_log(const Node& node, Operands operands) {
  return unary_floating(node, operands[0], [](double x) { return std::log(x); });
}

Tensor kernel_tanh(const Node& node, Operands operands) {
  return unary_floating(node, operands[0], [](double x) { return std::tanh(x); });
}

Tensor kernel_logistic(const Node& node, Operands operands) {
  return unary_floating(node, operands[0], [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

Tensor kernel_sqrt(const Node& node, Operands operands) {
  return unary_floating(node, operands[0], [](double x) { return std::sqrt(x); });
}

Tensor kernel_rsqrt(const Node& node, Operands operands) {
  return unary_floating(node, operands[0], [](double x) { return 1.0 / std::sqrt(x); });
}

Tensor kernel_erf(const Node& node, Operands operands) {
  return unary_floating(node, operands[0], [](double x) { return std::erf(x); });
}

Tensor kernel_logical_not(const Node& node, Operands operands) {
  return logical(node, operands, [](bool a, bool) { return !a; });
}

Tensor kernel_add(const Node& node, Operands operands) {
  return binary_numeric(
      node, operands, [](double a, double b) { return a + b; }, wrap_add);
}

Tensor kernel_sub(const Node& node, Operands operands) {
  return binary_numeric(
      node, operands, [](double a, double b) { return a - b; }, wrap_sub);
}

Tensor kernel_mul(const Node& node, Operands operands) {
  return binary_numeric(
      node, operands, [](double a, double b) { return a * b; }, wrap_mul);
}

// Integer division truncates toward zero; dividing by zero is an error rather than undefined.
Tensor kernel_div(const Node& node, Operands operands) {
  return binary_numeric(
      node, operands, [](double a, double b) { return a / b; },
      [](int64_t a, int64_t b) {
        check(b != 0, "div", "integer division by zero");
        return b == -1 ? wrap_neg(a) : a / b;  // INT64_MIN / -1 wraps
      });
}

Tensor kernel_max(const Node& node, Operands operands) {
  return binary_numeric(node, operands, nan_max,
                        [](int64_t a, int64_t b) { return a > b ? a : b; });
}

Tensor kernel_min(const Node& node, Operands operands) {
  return binary_numeric(node, operands, nan_min,
                        [](int64_t a, int64_t b) { return a < b ? a : b; });
}

Tensor kernel_pow(const Node& node, Operands operands) {
  return binary_numeric(
      node, operands, [](double a, double b) { return std::pow(a, b); }, int_pow);
}

Tensor kernel_logical_and(const Node& node, Operands operands) {
  return logical(node, operands, [](bool a, bool b) { return a && b; });
}

Tensor kernel_logical_or(const Node& node, Operands operands) {
  return logical(node, operands, [](bool a, bool b) { return a || b; });
}

}  // namespace kiln::reference
