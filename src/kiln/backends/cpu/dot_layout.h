// Internal: dot_general seen as a batched matrix multiply [B, M, K] x [B, K, N] -> [B, M, N]:
// which operand dims form B, M, K and N, and whether an operand's memory already is a strided
// view [batch dims..., rows, cols] (then a library reads it in place) or must first be copied.
// The batch may stay several dims when the operands' strides do not merge them (attention heads
// read in place from [batch, seq, heads, head_dim]).
#pragma once

#include <optional>
#include <vector>

#include "kiln/backends/cpu/strided_copy.h"
#include "kiln/ir/graph.h"

namespace kiln::cpu {

// At most this many batch dims are kept apart; more, and the operands are copied.
inline constexpr size_t kMaxBatchDims = 4;

// An operand as a view [batch dims..., rows, cols]: sizes and element strides (the batch dims are
// the same for both operands and the result; none when the batch is 1).
struct MatrixView {
  std::vector<int64_t> sizes, strides;

  int64_t col_stride() const { return strides.back(); }
};

struct DotLayout {
  int64_t batch = 1, m = 1, k = 1, n = 1;
  std::vector<int64_t> batch_sizes;  // the batch dims kept apart, outermost first (size-1 dropped)
  // lhs dims in the order batch, free, contracting; rhs dims batch, contracting, free.
  Axes lhs_order, rhs_order;
  std::optional<MatrixView> lhs_view, rhs_view;  // empty when the dims do not collapse
};

DotLayout dot_layout(const Shape& lhs, const Shape& rhs, const DotAttrs& attrs);

// The view of a dense [batch..., rows, cols] array.
MatrixView dense_view(const std::vector<int64_t>& batch_sizes, int64_t rows, int64_t cols);

// The copy of an operand into a dense buffer with its dims in `order` (so, [batch, rows, cols]).
StridedCopy canonical_copy(const Shape& shape, const Axes& order, size_t element);

}  // namespace kiln::cpu
