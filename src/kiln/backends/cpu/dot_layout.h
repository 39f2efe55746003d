// Internal: dot_general seen as a batched matrix multiply [B, M, K] x [B, K, N] -> [B, M, N]:
// which operand dims form B, M, K and N, and whether an operand's memory already is such a
// strided 3-D view (then a library reads it in place) or must first be copied.
#pragma once

#include <optional>

#include "kiln/backends/cpu/strided_copy.h"
#include "kiln/ir/graph.h"

namespace kiln::cpu {

// An operand as a 3-D view [batch, rows, cols]: sizes and element strides.
struct MatrixView {
  int64_t sizes[3];
  int64_t strides[3];
};

struct DotLayout {
  int64_t batch = 1, m = 1, k = 1, n = 1;
  // lhs dims in the order batch, free, contracting; rhs dims batch, contracting, free.
  Axes lhs_order, rhs_order;
  std::optional<MatrixView> lhs_view, rhs_view;  // empty when the dims do not collapse
};

DotLayout dot_layout(const Shape& lhs, const Shape& rhs, const DotAttrs& attrs);

// The view of a dense [batch, rows, cols] copy.
MatrixView dense_view(int64_t batch, int64_t rows, int64_t cols);

// The copy of an operand into a dense buffer with its dims in `order` (so, [batch, rows, cols]).
StridedCopy canonical_copy(const Shape& shape, const Axes& order, size_t element);

}  // namespace kiln::cpu
