// Reference kernels of compare, select and cast.
#include <cmath>
#include <limits>

#include "kiln/backends/reference/kernel_util.h"
#include "kiln/backends/reference/kernels.h"

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

Tensor kernel_compare(const Node& node, Operands operands) {
  const Tensor& a = operands[0];
  const Tensor& b = operands[1];
  CompareDir dir = node.attr<CompareAttrs>().dir;
  Tensor out(node.dtype, node.shape);
  bool floating = is_floating(a.dtype());
  for (int64_t i = 0; i < out.numel(); ++i) {
    bool result = floating ? compare_as(dir, a.get(i), b.get(i))
                           : compare_as(dir, load_int(a, i), load_int(b, i));
    store_int(out, i, result ? 1 : 0);
  }
  return out;
}

Tensor kernel_select(const Node& node, Operands operands) {
  const Tensor& pred = operands[0];
  if (pred.dtype() != DType::boolean) fail_dtype(node, pred.dtype());
  Tensor out(node.dtype, node.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    copy_element(out, i, operands[load_int(pred, i) != 0 ? 1 : 2], i);
  }
  return out;
}

// Floating -> floating rounds once from double (bf16/f16 to nearest even); -> integer as
// float_to_int; integer -> integer wraps; anything -> bool is "nonzero" (NaN included).
Tensor kernel_cast(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  DType to = node.dtype;
  Tensor out(to, node.shape);
  bool from_floating = is_floating(x.dtype());
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (from_floating) {
      double value = x.get(i);
      if (is_integer(to)) {
        store_int(out, i, float_to_int(value, to));
      } else {
        out.set(i, value);  // bool: nonzero
      }
    } else {
      store_int(out, i, load_int(x, i));  // integers wrap; floats: an i64 beyond 2^53 rounds twice
    }
  }
  return out;
}

}  // namespace kiln::reference
