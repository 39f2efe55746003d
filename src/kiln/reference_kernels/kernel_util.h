// Internal: the helpers every reference kernel shares: row-major index iteration and strided
// walks, exact integer loads, two's-complement wrapping arithmetic, Philox bits in blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::reference {

// Advances a row-major multi-index over `shape`; false once it has passed the last element
// (the index is then all zeros again).
bool next_index(std::vector<int64_t>& index, const Shape& shape);

// Walks `shape` in row-major order carrying two linear offsets (say, into a destination and a
// source), each advanced by its own per-dim strides. Calls row(a, b, count, a_step, b_step) once
// per run along the last dim, whose elements are at a + j * a_step and b + j * b_step.
template <typename Row>
void walk_rows(const Shape& shape, const std::vector<int64_t>& a_strides,
               const std::vector<int64_t>& b_strides, Row&& row) {
  if (shape_numel(shape) == 0) return;
  if (shape.empty()) return row(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0});
  size_t last = shape.size() - 1;
  std::vector<int64_t> index(last, 0);  // over the outer dims
  int64_t a = 0, b = 0;
  for (;;) {
    row(a, b, shape[last], a_strides[last], b_strides[last]);
    size_t d = last;
    for (; d > 0; --d) {  // advance the outer index like an odometer
      size_t dim = d - 1;
      a += a_strides[dim];
      b += b_strides[dim];
      if (++index[dim] < shape[dim]) break;
      a -= a_strides[dim] * shape[dim];
      b -= b_strides[dim] * shape[dim];
      index[dim] = 0;
    }
    if (d == 0) return;
  }
}

// Flat element `flat` of `shape` as a multi-index, printed as "(1,0)".
std::string index_str(int64_t flat, const Shape& shape);

// Integer and bool elements as int64 without going through double (i64 beyond 2^53 stays exact).
int64_t load_int(const Tensor& tensor, int64_t i);

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

// Throws Error naming the node's op and a dtype its kernel does not accept.
[[noreturn]] void fail_dtype(const Node& node, DType dtype);

// Product of shape[begin, end).
int64_t dims_product(const Shape& shape, size_t begin, size_t end);

// The bits of random_bits(seed, offset, shape, stream) (kiln/ir/philox.h): with a scalar offset
// bits[i] = random_bits_at(seed, offset, stream, i), with a vector one each leading row r takes
// random_bits_at(seed, offset[r], stream, i) for i within the row; one Philox block per 4 words.
void fill_random_bits(int64_t seed, const Tensor& offset, uint32_t stream, uint32_t* bits,
                      const Shape& shape);

}  // namespace kiln::reference
