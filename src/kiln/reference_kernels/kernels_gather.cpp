// Reference kernels of gather and scatter_add along one axis. Indices outside the axis are a
// run-time Error naming the op, the index and its position (nothing wraps or clamps).
#include <cstring>

#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"
#include "kiln/ir/error.h"

namespace kiln::reference {
namespace {

// The operand viewed as [outer, size, inner] around the axis; indices select along `size`.
struct AxisView {
  int64_t outer, size, inner;
};

AxisView axis_view(const Shape& operand, int64_t axis) {
  auto a = static_cast<size_t>(axis);
  return {dims_product(operand, 0, a), operand[a], dims_product(operand, a + 1, operand.size())};
}

// Indices as int64, each checked against the axis size.
std::vector<int64_t> checked_indices(const Node& node, const Tensor& indices, int64_t size) {
  if (indices.dtype() != DType::i32 && indices.dtype() != DType::i64) {
    fail_dtype(node, indices.dtype());
  }
  std::vector<int64_t> values(static_cast<size_t>(indices.numel()));
  for (int64_t j = 0, n = indices.numel(); j < n; ++j) {
    int64_t index = load_int(indices, j);
    check(index >= 0 && index < size, op_name(node.op), "index ", index, " at position ",
          index_str(j, indices.shape()), " of the indices is outside [0, ", size, ")");
    values[static_cast<size_t>(j)] = index;
  }
  return values;
}

}  // namespace

Tensor kernel_gather(const Node& node, Operands operands) {
  const Tensor& operand = operands[0];
  AxisView view = axis_view(operand.shape(), node.attr<GatherAttrs>().axis);
  std::vector<int64_t> indices = checked_indices(node, operands[1], view.size);
  auto count = static_cast<int64_t>(indices.size());
  size_t block = static_cast<size_t>(view.inner) * dtype_size(operand.dtype());
  Tensor out(operand.dtype(), node.shape);
  for (int64_t o = 0; block > 0 && o < view.outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      int64_t source = o * view.size + indices[static_cast<size_t>(j)];
      std::memcpy(out.data() + static_cast<size_t>(o * count + j) * block,
                  operand.data() + static_cast<size_t>(source) * block, block);
    }
  }
  return out;
}

// Duplicate indices accumulate, in order; floating sums are kept in double and rounded once at the
// end, integers wrap. Only the operand rows that receive updates get an accumulator row (an
// embedding gradient touches a few rows of a large table); the others are copied through the
// compute type unchanged.
Tensor kernel_scatter_add(const Node& node, Operands operands) {
  const Tensor& operand = operands[0];
  const Tensor& updates = operands[2];
  AxisView view = axis_view(operand.shape(), node.attr<GatherAttrs>().axis);
  std::vector<int64_t> indices = checked_indices(node, operands[1], view.size);
  auto count = static_cast<int64_t>(indices.size());
  auto inner = static_cast<size_t>(view.inner);
  Tensor out(operand.dtype(), node.shape);
  auto accumulate = [&]<typename T, typename C>(auto add) {  // C: the compute type
    const T* in = operand.data_as<T>();
    const T* update = updates.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = narrow<T>(widen(in[i]));
    // Operand row (outer * size + index) -> its accumulator row in acc, or -1 if not updated.
    std::vector<int64_t> acc_row(static_cast<size_t>(view.outer * view.size), -1);
    std::vector<C> acc;
    int64_t acc_rows = 0;
    for (int64_t outer = 0; outer < view.outer; ++outer) {
      for (int64_t j = 0; j < count; ++j) {
        auto row = static_cast<size_t>(outer * view.size + indices[static_cast<size_t>(j)]);
        if (acc_row[row] < 0) {
          acc_row[row] = acc_rows++;
          for (size_t e = 0; e < inner; ++e) acc.push_back(widen(in[row * inner + e]));
        }
        C* slot = acc.data() + static_cast<size_t>(acc_row[row]) * inner;
        const T* values = update + static_cast<size_t>(outer * count + j) * inner;
        for (size_t e = 0; e < inner; ++e) slot[e] = add(slot[e], widen(values[e]));
      }
    }
    for (size_t row = 0; row < acc_row.size(); ++row) {
      if (acc_row[row] < 0) continue;
      const C* sums = acc.data() + static_cast<size_t>(acc_row[row]) * inner;
      for (size_t e = 0; e < inner; ++e) o[row * inner + e] = narrow<T>(sums[e]);
    }
  };
  if (is_floating(operand.dtype())) {
    visit_floating(node, operand.dtype(), [&]<typename T>() {
      accumulate.template operator()<T, double>([](double a, double b) { return a + b; });
    });
  } else {
    visit_integer(node, operand.dtype(), [&]<typename T>() {
      accumulate.template operator()<T, int64_t>(wrap_add);
    });
  }
  return out;
}

}  // namespace kiln::reference
