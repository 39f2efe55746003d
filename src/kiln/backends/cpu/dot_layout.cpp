// Grouping dot_general's dims into batch, rows and columns, and collapsing each group to one
// strided dim when the operand's row-major layout allows it.
#include "kiln/backends/cpu/dot_layout.h"

#include <algorithm>

namespace kiln::cpu {
namespace {

int64_t product(const Shape& shape, const Axes& dims) {
  int64_t size = 1;
  for (int64_t dim : dims) size *= shape[static_cast<size_t>(dim)];
  return size;
}

// The stride of `dims` taken together as one dim, if the layout allows: each (non-unit) dim steps
// over exactly the next one. A group of size 1 gets `fallback`, as it is never stepped.
std::optional<int64_t> collapsed_stride(const Shape& shape, const std::vector<int64_t>& strides,
                                        const Axes& dims, int64_t fallback) {
  std::optional<int64_t> inner;  // stride of the last non-unit dim seen so far
  int64_t expected = -1;
  for (int64_t dim : dims) {
    auto d = static_cast<size_t>(dim);
    if (shape[d] == 1) continue;
    if (inner && expected != strides[d] * shape[d]) return std::nullopt;
    inner = strides[d];
    expected = strides[d];
  }
  return inner.value_or(fallback);
}

// The operand's dims grouped as [g0, g1, g2], or nothing when a group does not collapse.
std::optional<MatrixView> view_of(const Shape& shape, const Axes& g0, const Axes& g1,
                                  const Axes& g2) {
  std::vector<int64_t> strides = shape_strides(shape);
  MatrixView dense = dense_view(product(shape, g0), product(shape, g1), product(shape, g2));
  MatrixView view = dense;
  const Axes* groups[3] = {&g0, &g1, &g2};
  for (size_t i = 0; i < 3; ++i) {
    std::optional<int64_t> stride = collapsed_stride(shape, strides, *groups[i], dense.strides[i]);
    if (!stride) return std::nullopt;
    view.strides[i] = *stride;
  }
  return view;
}

}  // namespace

MatrixView dense_view(int64_t batch, int64_t rows, int64_t cols) {
  return {{batch, rows, cols}, {rows * cols, cols, 1}};
}

DotLayout dot_layout(const Shape& lhs, const Shape& rhs, const DotAttrs& attrs) {
  auto rank = [](const Shape& shape) { return static_cast<int64_t>(shape.size()); };
  Axes lhs_free = dot_free_dims(rank(lhs), attrs.lhs_batch, attrs.lhs_contract);
  Axes rhs_free = dot_free_dims(rank(rhs), attrs.rhs_batch, attrs.rhs_contract);
  DotLayout layout;
  layout.batch = product(lhs, attrs.lhs_batch);
  layout.m = product(lhs, lhs_free);
  layout.k = product(lhs, attrs.lhs_contract);
  layout.n = product(rhs, rhs_free);
  layout.lhs_order = concat_axes(attrs.lhs_batch, lhs_free, attrs.lhs_contract);
  layout.rhs_order = concat_axes(attrs.rhs_batch, attrs.rhs_contract, rhs_free);
  layout.lhs_view = view_of(lhs, attrs.lhs_batch, lhs_free, attrs.lhs_contract);
  layout.rhs_view = view_of(rhs, attrs.rhs_batch, attrs.rhs_contract, rhs_free);
  return layout;
}

StridedCopy canonical_copy(const Shape& shape, const Axes& order, size_t element) {
  std::vector<int64_t> strides = shape_strides(shape);
  StridedCopy copy{{}, {}, {}, 0, 0, element};
  for (int64_t dim : order) {
    copy.shape.push_back(shape[static_cast<size_t>(dim)]);
    copy.src_strides.push_back(strides[static_cast<size_t>(dim)]);
  }
  copy.dst_strides = shape_strides(copy.shape);
  return simplify(copy);
}

}  // namespace kiln::cpu
