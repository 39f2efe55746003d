// Reference kernels of compare, select and cast.
#include <cmath>
#include <limits>

#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"

namespace kiln::reference {
namespace {

template <typename T>
bool compare_as(CompareDir dir, T a, T b) {
  switch (dir) {
    case CompareDir::eq:
      return a == b;
    case CompareDir::ne:
      return a != b;  // the one direction where NaN compares true
    case CompareDir::lt:
      return a < b;
    case CompareDir::le:
      return a <= b;
    case CompareDir::gt:
      return a > b;
    case CompareDir::ge:
      return a >= b;
  }
  return false;
}

// Float -> integer: truncates toward zero, saturates at the dtype's range, NaN gives 0 (C++
// leaves these cases undefined; this is XLA's choice).
int64_t float_to_int(double value, DType dtype) {
  if (std::isnan(value)) return 0;
  value = std::trunc(value);
  double low = dtype == DType::i32 ? -2147483648.0 : dtype == DType::u32 ? 0.0 : -0x1p63;
  double high = dtype == DType::i32 ? 2147483647.0 : dtype == DType::u32 ? 4294967295.0 : 0x1p63;
  if (value <= low)
    return dtype == DType::i64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(low);
  if (value >= high)
    return dtype == DType::i64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(high);
  return static_cast<int64_t>(value);
}

}  // namespace

// Floats compare as doubles (exact), integers and bools as int64.
Tensor kernel_compare(const Node& node, Operands operands) {
  const Tensor& a = operands[0];
  const Tensor& b = operands[1];
  CompareDir dir = node.attr<CompareAttrs>().dir;
  Tensor out(DType::boolean, node.shape);
  uint8_t* o = out.data_as<uint8_t>();
  visit_any(node, a.dtype(), [&]<typename T>() {
    const T* x = a.data_as<T>();
    const T* y = b.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) {
      o[i] = compare_as(dir, widen(x[i]), widen(y[i]));
    }
  });
  return out;
}

Tensor kernel_select(const Node& node, Operands operands) {
  const Tensor& pred = operands[0];
  if (pred.dtype() != DType::boolean) fail_dtype(node, pred.dtype());
  Tensor out(operands[1].dtype(), node.shape);
  const uint8_t* p = pred.data_as<uint8_t>();
  visit_bytes(out.dtype(), [&]<typename T>() {
    const T* on_true = operands[1].data_as<T>();
    const T* on_false = operands[2].data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = p[i] != 0 ? on_true[i] : on_false[i];
  });
  return out;
}

// Floating -> floating rounds once from double (bf16/f16 to nearest even); -> integer as
// float_to_int; integer -> integer wraps; anything -> bool is "nonzero" (NaN included).
Tensor kernel_cast(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  DType to = node.dtype;
  Tensor out(to, node.shape);
  visit_any(node, x.dtype(), [&]<typename From>() {
    visit_any(node, to, [&]<typename To>() {
      const From* in = x.data_as<From>();
      To* o = out.data_as<To>();
      for (int64_t i = 0, n = out.numel(); i < n; ++i) {
        if constexpr (!FloatStorage<From>) {
          // Integers wrap; into f32 an i64 beyond 2^53 rounds twice (through double).
          o[i] = narrow<To>(widen(in[i]));
        } else if constexpr (std::same_as<To, uint8_t>) {
          o[i] = widen(in[i]) != 0.0 ? 1 : 0;
        } else if constexpr (IntStorage<To>) {
          o[i] = narrow<To>(float_to_int(widen(in[i]), to));
        } else {
          o[i] = narrow<To>(widen(in[i]));
        }
      }
    });
  });
  return out;
}

}  // namespace kiln::reference
