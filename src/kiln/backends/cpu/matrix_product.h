// Internal: one matrix product as Kiln's own product kernels take it (amx_products.h for bf16 on
// AMX tiles, f32_products.h for f32 on AVX2 register tiles): the shape, how each operand is
// stored, and what c starts from.
#pragma once

#include <cstdint>

namespace kiln::cpu {

// c[rows x cols] = start + a[rows x inner] b[inner x cols], leading dims lda, ldb, ldc.
struct MatrixProduct {
  int64_t rows = 0, inner = 0, cols = 0;
  bool a_transposed = false;  // a stored [inner x rows]
  bool b_transposed = false;  // b stored [cols x inner]
  int64_t lda = 0, ldb = 0, ldc = 0;
  // What c starts from: zeros, an f32 [cols] bias on every row, or an f32 [rows x cols] addend
  // (leading dim ldc).
  enum class Start : uint8_t { zeros, bias, addend } start = Start::zeros;
  bool bf16_result = false;  // c's sums rounded to bf16 (to nearest even) rather than kept in f32
};

}  // namespace kiln::cpu
