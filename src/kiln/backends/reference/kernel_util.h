// Internal: the helpers every reference kernel shares: row-major index iteration, exact integer
// element access with two's-complement wrapping, and byte copies of single elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::reference {

// Advances a row-major multi-index over `shape`; false once it has passed the last element
// (the index is then all zeros again).
bool next_index(std::vector<int64_t>& index, const Shape& shape);

// Flat element `flat` of `shape` as a multi-index, printed as "(1,0)".
std::string index_str(int64_t flat, const Shape& shape);

// Integer and bool elements as int64 without going through double (i64 beyond 2^53 stays exact).
int64_t load_int(const Tensor& tensor, int64_t i);
// Stores `value` wrapped to i32/u32 (two's complement), as 0/1 for bool, or converted for floats.
void store_int(Tensor& tensor, int64_t i, int64_t value);

// int64 arithmetic that wraps instead of overflowing (signed overflow is undefined in C++).
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrap_neg(int64_t a) { return wrap_sub(0, a); }

// dst[dst_i] = src[src_i], bytes copied exactly; both tensors share a dtype.
void copy_element(Tensor& dst, int64_t dst_i, const Tensor& src, int64_t src_i);

// Throws Error naming the node's op and a dtype its kernel does not accept.
[[noreturn]] void fail_dtype(const Node& node, DType dtype);

// Product of shape[begin, end).
int64_t dims_product(const Shape& shape, size_t begin, size_t end);

}  // namespace kiln::reference
