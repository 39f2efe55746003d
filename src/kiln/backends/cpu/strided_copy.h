// Internal: copies between strided views of row-major buffers — the engine of every layout kernel
// (broadcast, transpose, slice, concat, pad) and of the operand copies before a matrix multiply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kiln/ir/shape.h"

namespace kiln::cpu {

// Element i (a multi-index over `shape`) goes from src[src_base + sum i[d] * src_strides[d]] to
// dst[dst_base + sum i[d] * dst_strides[d]]; strides and bases count elements.
struct StridedCopy {
  Shape shape;
  std::vector<int64_t> dst_strides, src_strides;
  int64_t dst_base = 0, src_base = 0;
  size_t element = 4;  // bytes
};

// Drops size-1 dims and merges dims that are contiguous in both views, so that the copy runs in
// as few, as long rows as possible. Done once, at compile time.
StridedCopy simplify(StridedCopy copy);

// Runs a simplified copy, split across the threads when large. Rows contiguous on both sides are
// memcpy'd, a zero source stride fills, and a transposing copy (the source's unit stride on an
// outer dim) goes tile by tile so that both sides stay in cache.
void run_copy(const StridedCopy& copy, std::byte* dst, const std::byte* src);

}  // namespace kiln::cpu
