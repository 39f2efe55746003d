// Reference kernels of gather and scatter_add along one axis. Indices outside the axis are a
// run-time Error naming the op, the index and its position (nothing wraps or clamps).
#include <cstring>

#include "kiln/backends/reference/kernel_util.h"
#include "kiln/backends/reference/kernels.h"
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
  for (int64_t j = 0; j < indices.numel(); ++j) {
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
  size_t block = static_cast<size_t>(view.inner) * dtype_size(node.dtype);
  Tensor out(node.dtype, node.shape);
  for (int64_t o = 0; block > 0 && o < view.outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      int64_t source = o * view.size + indices[static_cast<size_t>(j)];
      std::memcpy(out.data() + static_cast<size_t>(o * count + j) * block,
                  operand.data() + static_cast<size_t>(source) * block, block);
    }
  }
  return out;
}

// Duplicate indices accumulate; floating sums are kept in double and rounded once at the end.
Tensor kernel_scatter_add(const Node& node, Operands operands) {
  const Tensor& operand = operands[0];
  const Tensor& updates = operands[2];
  AxisView view = axis_view(operand.shape(), node.attr<GatherAttrs>().axis);
  std::vector<int64_t> indices = checked_indices(node, operands[1], view.size);
  auto count = static_cast<int64_t>(indices.size());
  // Element u of updates lands on element target(u) of the operand.
  auto target = [&](int64_t u) {
    int64_t o = u / (count * view.inner);
    int64_t j = (u / view.inner) % count;
    return (o * view.size + indices[static_cast<size_t>(j)]) * view.inner + u % view.inner;
  };
  Tensor out(node.dtype, node.shape);
  if (is_floating(operand.dtype())) {
    std::vector<double> acc = operand.to_doubles();
    for (int64_t u = 0; u < updates.numel(); ++u) {
      acc[static_cast<size_t>(target(u))] += updates.get(u);
    }
    for (int64_t i = 0; i < out.numel(); ++i) out.set(i, acc[static_cast<size_t>(i)]);
  } else if (is_integer(operand.dtype())) {
    std::vector<int64_t> acc(static_cast<size_t>(operand.numel()));
    for (int64_t i = 0; i < operand.numel(); ++i) {
      acc[static_cast<size_t>(i)] = load_int(operand, i);
    }
    for (int64_t u = 0; u < updates.numel(); ++u) {
      int64_t& slot = acc[static_cast<size_t>(target(u))];
      slot = wrap_add(slot, load_int(updates, u));
    }
    for (int64_t i = 0; i < out.numel(); ++i) store_int(out, i, acc[static_cast<size_t>(i)]);
  } else {
    fail_dtype(node, operand.dtype());
  }
  return out;
}

}  // namespace kiln::reference
