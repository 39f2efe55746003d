// The AVX2 f32 products (f32_products.h): against double-precision sums (wherever the CPU has
// AVX2, also under KILN_MAX_CPU_ISA), with b as stored or transposed, c started from zeros, a
// bias or an addend (also c's own buffer), leading dims wider than the operands, tiles cut short
// at c's last rows and columns, inner dims of more than one pass over c, and more columns than a
// column chunk; which products the CPU backend gives them (also under KILN_MAX_CPU_ISA); and
// BERT-tiny's products through the backend against the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "cpu_test_util.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/f32_products.h"

namespace kiln::cpu {
namespace {

using Start = MatrixProduct::Start;

// The kernel itself runs wherever the CPU has AVX2, whatever KILN_MAX_CPU_ISA chooses for the
// backend.
bool cpu_has_avx2() { return detected_cpu_isa() >= CpuIsa::avx2; }

std::vector<float> values(int64_t count, int seed) {
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>((static_cast<int64_t>(i) * 37 + seed * 11) % 23 - 11) / 8.0f;
  }
  return v;
}

// Checks f32_product against double sums; `in_place` starts c from its own buffer (the addend
// already there).
void expect_sums(MatrixProduct p, bool in_place = false) {
  SCOPED_TRACE(::testing::Message() << p.rows << "x" << p.inner << "x" << p.cols
                                    << (p.b_transposed ? " b^T" : "") << " start "
                                    << static_cast<int>(p.start) << (in_place ? " in place" : ""));
  p.lda = p.inner + 3;
  p.ldb = (p.b_transposed ? p.inner : p.cols) + 5;
  p.ldc = p.cols + 2;
  std::vector<float> a = values(p.rows * p.lda, 1);
  std::vector<float> b = values((p.b_transposed ? p.cols : p.inner) * p.ldb, 2);
  std::vector<float> start = values(p.rows * p.ldc, 3);
  std::vector<float> c(static_cast<size_t>(p.rows * p.ldc), 7.0f);
  if (in_place) c = start;
  std::vector<std::byte> scratch(static_cast<size_t>(f32_product_scratch_bytes(p)));
  const float* from = p.start == Start::zeros ? nullptr : in_place ? c.data() : start.data();
  f32_product(p, a.data(), b.data(), from, c.data(), scratch.data());
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t j = 0; j < p.ldc; ++j) {
      auto at = static_cast<size_t>(r * p.ldc + j);
      if (j >= p.cols) {  // past c's columns: untouched
        ASSERT_EQ(c[at], in_place ? start[at] : 7.0f) << r << ", " << j;
        continue;
      }
      double want = p.start == Start::bias     ? start[static_cast<size_t>(j)]
                    : p.start == Start::addend ? start[at]
                                               : 0.0;
      double magnitude = std::abs(want);
      for (int64_t k = 0; k < p.inner; ++k) {
        double bk = b[static_cast<size_t>(p.b_transposed ? j * p.ldb + k : k * p.ldb + j)];
        double term = a[static_cast<size_t>(r * p.lda + k)] * bk;
        want += term;
        magnitude += std::abs(term);
      }
      // f32 products and sums: at most two f32 roundings per term, of the terms' magnitude.
      double bound = 2.0 * static_cast<double>(p.inner + 1) * 0x1p-24 * magnitude;
      ASSERT_NEAR(c[at], want, bound) << r << ", " << j;
    }
  }
}

TEST(F32Products, MatchDoubleSums) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2";
  // Tiles cut short at the last rows (1, 5, 7, 13 rows) and columns (1, 15, 17, 40); one inner
  // value; 257 and 600 (passes over c that add to it); 300 columns (a column chunk of 256,
  // then the rest); c wider than tall (split by columns).
  for (auto [rows, inner, cols] : {std::tuple{1, 1, 1}, {5, 3, 15}, {7, 257, 17}, {13, 600, 40},
                                   {100, 64, 300}, {12, 20, 640}, {2048 / 16, 128, 128}}) {
    for (bool b_transposed : {false, true}) {
      expect_sums({.rows = rows, .inner = inner, .cols = cols, .b_transposed = b_transposed});
    }
  }
  for (Start start : {Start::bias, Start::addend}) {
    for (bool b_transposed : {false, true}) {
      expect_sums({.rows = 29, .inner = 300, .cols = 37, .b_transposed = b_transposed,
                   .start = start});
    }
  }
  expect_sums({.rows = 29, .inner = 300, .cols = 37, .start = Start::addend}, true);
  expect_sums({.rows = 100, .inner = 520, .cols = 300, .start = Start::addend}, true);
}

TEST(F32Products, FitWhereTheKernelsUseAvx2) {
  const bool avx2 = loop_kernel_isa() == CpuIsa::avx2;
  // BERT-tiny's and -mini's projections and data gradients.
  EXPECT_EQ(f32_product_fits({.rows = 2048, .inner = 128, .cols = 512, .b_transposed = true}),
            avx2);
  EXPECT_EQ(f32_product_fits({.rows = 2048, .inner = 1024, .cols = 256}), avx2);
  EXPECT_EQ(f32_product_fits({.rows = 3, .inner = 1, .cols = 1}), avx2);
  // Not the weight gradients' transposed a, a bf16 c, more than 2^21 values of b, or nothing.
  EXPECT_FALSE(f32_product_fits({.rows = 128, .inner = 2048, .cols = 512, .a_transposed = true}));
  EXPECT_FALSE(f32_product_fits({.rows = 2048, .inner = 128, .cols = 512, .bf16_result = true}));
  EXPECT_FALSE(f32_product_fits({.rows = 2048, .inner = 768, .cols = 3072}));
  EXPECT_FALSE(f32_product_fits({.rows = 0, .inner = 128, .cols = 128}));
}

// BERT-tiny's products as the forward and backward spell them, through the CPU backend against
// the reference: x W^T + bias, dY W + the residual's gradient, a plain product, and X^T dY (a
// transposed a: oneDNN's). Under KILN_MAX_CPU_ISA=avx2 the first three are f32_product's.
TEST(F32Products, BertTinysProductsThroughTheBackendMatchReference) {
  Graph graph;
  testing::Feeds feeds(graph, 12);
  Value x = feeds.any(DType::f32, {4, 37, 128}), w = feeds.any(DType::f32, {512, 128});
  Value bias = feeds.any(DType::f32, {512}), dy = feeds.any(DType::f32, {4, 37, 512});
  Value residual = feeds.any(DType::f32, {4, 37, 128});
  Value forward = dot_general(x, w, {{}, {}, {2}, {1}}, DType::f32) +
                  broadcast_in_dim(bias, {4, 37, 512}, {2});
  Value data_gradient = dot_general(dy, w, {{}, {}, {2}, {0}}, DType::f32) + residual;
  Value a = feeds.any(DType::f32, {150, 70}), b = feeds.any(DType::f32, {70, 33});
  testing::expect_matches_reference(
      graph,
      {forward, data_gradient, dot_general(a, b, {{}, {}, {1}, {0}}, DType::f32),
       dot_general(x, dy, {{}, {}, {0, 1}, {0, 1}}, DType::f32)},
      feeds.arguments(), {}, 40.0);
}

}  // namespace
}  // namespace kiln::cpu
