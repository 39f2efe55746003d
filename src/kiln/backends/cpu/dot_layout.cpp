// Grouping dot_general's dims into batch, rows and columns, and collapsing each group to strided
// dims when the operand's row-major layout allows it.
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

// A batch dim kept apart: its size and its stride in each operand.
struct BatchDim {
  int64_t size, lhs_stride, rhs_stride;
};

// The batch dims of both operands (size-1 dims dropped), each merged into the next one out where
// both operands' strides allow: as few dims as the layouts permit, outermost first.
std::vector<BatchDim> batch_dims(const Shape& lhs, const Shape& rhs, const DotAttrs& attrs) {
  std::vector<int64_t> lhs_strides = shape_strides(lhs), rhs_strides = shape_strides(rhs);
  std::vector<BatchDim> dims;
  for (size_t i = 0; i < attrs.lhs_batch.size(); ++i) {
    auto l = static_cast<size_t>(attrs.lhs_batch[i]), r = static_cast<size_t>(attrs.rhs_batch[i]);
    if (lhs[l] == 1) continue;
    BatchDim dim{lhs[l], lhs_strides[l], rhs_strides[r]};
    if (!dims.empty() && dims.back().lhs_stride == dim.lhs_stride * dim.size &&
        dims.back().rhs_stride == dim.rhs_stride * dim.size) {
      dims.back() = {dims.back().size * dim.size, dim.lhs_stride, dim.rhs_stride};
    } else {
      dims.push_back(dim);
    }
  }
  return dims;
}

// The operand [rows, cols] groups collapsed after its batch dims, or nothing when a group does
// not collapse or the batch has too many dims.
std::optional<MatrixView> view_of(const Shape& shape, const std::vector<BatchDim>& batch,
                                  bool lhs, const Axes& rows, const Axes& cols) {
  if (batch.size() > kMaxBatchDims) return std::nullopt;
  std::vector<int64_t> strides = shape_strides(shape);
  int64_t row_count = product(shape, rows), col_count = product(shape, cols);
  std::optional<int64_t> row_stride = collapsed_stride(shape, strides, rows, col_count);
  std::optional<int64_t> col_stride = collapsed_stride(shape, strides, cols, 1);
  if (!row_stride || !col_stride) return std::nullopt;
  MatrixView view;
  for (const BatchDim& dim : batch) {
    view.sizes.push_back(dim.size);
    view.strides.push_back(lhs ? dim.lhs_stride : dim.rhs_stride);
  }
  view.sizes.insert(view.sizes.end(), {row_count, col_count});
  view.strides.insert(view.strides.end(), {*row_stride, *col_stride});
  return view;
}

}  // namespace

MatrixView dense_view(const std::vector<int64_t>& batch_sizes, int64_t rows, int64_t cols) {
  MatrixView view{batch_sizes, std::vector<int64_t>(batch_sizes.size() + 2)};
  view.sizes.insert(view.sizes.end(), {rows, cols});
  int64_t stride = 1;
  for (size_t d = view.sizes.size(); d-- > 0;) {
    view.strides[d] = stride;
    stride *= view.sizes[d];
  }
  return view;
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
  std::vector<BatchDim> batch = batch_dims(lhs, rhs, attrs);
  for (const BatchDim& dim : batch) layout.batch_sizes.push_back(dim.size);
  layout.lhs_view = view_of(lhs, batch, true, lhs_free, attrs.lhs_contract);
  layout.rhs_view = view_of(rhs, batch, false, attrs.rhs_contract, rhs_free);
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
