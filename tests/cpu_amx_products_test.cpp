// The AMX products (amx_products.h): against double-precision sums of the same bf16 values
// (wherever the CPU has AMX, also under KILN_MAX_CPU_ISA), with a and b each as stored or
// transposed, c started from zeros, a bias or an addend and kept in f32 or rounded to bf16, leading
// dims wider than the operands, inner dims that are not whole tiles and that take more than one
// pass over c, and a last column chunk narrower than the others; which products the CPU backend
// gives them (also under KILN_MAX_CPU_ISA); and BERT's products through the backend against the
// reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "cpu_test_util.h"
#include "kiln/backends/cpu/amx_products.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "support/bf16_words.h"

namespace kiln::cpu {
namespace {

using Start = MatrixProduct::Start;

bool amx_in_use() { return effective_cpu_isa() == CpuIsa::avx512_core_amx; }
// The kernel itself runs wherever the CPU has AMX, whatever KILN_MAX_CPU_ISA chooses for the
// backend.
bool cpu_has_amx() { return detected_cpu_isa() == CpuIsa::avx512_core_amx; }

// Element (r, k) of a [rows x inner] operand stored with leading dim ld ([inner x rows] when
// transposed).
double element(const std::vector<uint16_t>& x, bool transposed, int64_t ld, int64_t r, int64_t k) {
  return testing::bf16_word_value(x[static_cast<size_t>(transposed ? k * ld + r : r * ld + k)]);
}

void expect_exact_sums(MatrixProduct p) {
  SCOPED_TRACE(::testing::Message() << p.rows << "x" << p.inner << "x" << p.cols
                                    << (p.a_transposed ? " a^T" : "")
                                    << (p.b_transposed ? " b^T" : "") << " start "
                                    << static_cast<int>(p.start)
                                    << (p.bf16_result ? " into bf16" : ""));
  if (amx_in_use()) {  // under a cap nothing fits (FitWholeBlocksWhereAmxIsInUse)
    ASSERT_TRUE(amx_product_fits(p));
  }
  p.lda = (p.a_transposed ? p.rows : p.inner) + 32;  // in place, tiles read whole rows of 32
  p.ldb = (p.b_transposed ? p.inner : p.cols) + 32;
  p.ldc = p.cols + 2;
  int64_t a_rows = p.a_transposed ? p.inner : p.rows, b_rows = p.b_transposed ? p.cols : p.inner;
  std::vector<uint16_t> a = testing::random_bf16_words(a_rows * p.lda, 1);
  std::vector<uint16_t> b = testing::random_bf16_words(b_rows * p.ldb, 2);
  std::vector<float> start(static_cast<size_t>(p.rows * p.ldc));
  for (size_t i = 0; i < start.size(); ++i) start[i] = static_cast<float>(i % 7) - 3.0f;
  std::vector<float> c(static_cast<size_t>(p.rows * p.ldc), 7.0f);
  std::vector<uint16_t> c_bf16(c.size(), 0x40E0);  // 7 in bf16
  std::vector<std::byte> scratch(static_cast<size_t>(amx_product_scratch_bytes(p)));
  amx_product(p, a.data(), b.data(), p.start == Start::zeros ? nullptr : start.data(),
              p.bf16_result ? static_cast<void*>(c_bf16.data()) : c.data(), scratch.data());
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t j = 0; j < p.ldc; ++j) {
      auto at = static_cast<size_t>(r * p.ldc + j);
      float got = p.bf16_result ? testing::bf16_word_value(c_bf16[at]) : c[at];
      if (j >= p.cols) {  // past c's columns: untouched
        ASSERT_EQ(got, 7.0f) << r << ", " << j;
        continue;
      }
      double want = p.start == Start::bias     ? start[static_cast<size_t>(j)]
                    : p.start == Start::addend ? start[static_cast<size_t>(r * p.ldc + j)]
                                               : 0.0;
      double magnitude = std::abs(want);
      for (int64_t k = 0; k < p.inner; ++k) {
        double term = element(a, p.a_transposed, p.lda, r, k) *
                      element(b, !p.b_transposed, p.ldb, j, k);
        want += term;
        magnitude += std::abs(term);
      }
      // Exact products, f32 sums: at most one f32 rounding per term, of the terms' magnitude;
      // then, for a bf16 c, one rounding to bf16 (half its spacing, 2^-8 of the value).
      double bound = static_cast<double>(p.inner + 1) * 0x1p-24 * magnitude;
      if (p.bf16_result) bound += 0x1p-8 * (std::abs(want) + bound);
      ASSERT_NEAR(got, want, bound) << r << ", " << j;
    }
  }
}

TEST(MatrixProducts, MatchDoubleSumsOfTheSameValues) {
  if (!cpu_has_amx()) GTEST_SKIP() << "this CPU has no AMX (or Linux does not let it use it)";
  // a^T b (the weight gradients): one inner value; odd inner dims (padded with zeros); over 1024
  // (two passes over c, the second adding to the first); 288 columns (a chunk of 256, then 32).
  for (auto [rows, inner, cols] :
       {std::tuple{32, 1, 32}, {64, 77, 96}, {96, 1100, 64}, {32, 45, 288}}) {
    expect_exact_sums({.rows = rows, .inner = inner, .cols = cols, .a_transposed = true});
  }
  // a as stored, b either way, from each start.
  for (bool b_transposed : {false, true}) {
    for (Start start : {Start::zeros, Start::bias, Start::addend}) {
      expect_exact_sums({.rows = 64, .inner = 1088, .cols = 288, .b_transposed = b_transposed,
                         .start = start});
    }
  }
  expect_exact_sums({.rows = 32, .inner = 96, .cols = 64, .a_transposed = true,
                     .b_transposed = true, .start = Start::addend});
  // Rounded to bf16 (in one pass over an inner dim of more than 1024).
  expect_exact_sums({.rows = 64, .inner = 1088, .cols = 96, .b_transposed = true,
                     .start = Start::bias, .bf16_result = true});
  expect_exact_sums({.rows = 32, .inner = 45, .cols = 64, .a_transposed = true,
                     .bf16_result = true});
}

TEST(MatrixProducts, FitWholeBlocksWhereAmxIsInUse) {
  EXPECT_EQ(amx_product_fits({.rows = 768, .inner = 2048, .cols = 3072, .a_transposed = true}),
            amx_in_use());
  EXPECT_EQ(amx_product_fits({.rows = 32, .inner = 5, .cols = 64, .a_transposed = true}),
            amx_in_use());
  EXPECT_FALSE(amx_product_fits({.rows = 48, .inner = 2048, .cols = 3072, .a_transposed = true}));
  EXPECT_FALSE(amx_product_fits({.rows = 768, .inner = 2048, .cols = 80, .a_transposed = true}));
  EXPECT_FALSE(amx_product_fits({.rows = 0, .inner = 2048, .cols = 64, .a_transposed = true}));
  // Tiles read a as stored, or b transposed, in place: whole 32s of the inner dim.
  EXPECT_FALSE(amx_product_fits({.rows = 64, .inner = 3000, .cols = 64}));
  EXPECT_FALSE(amx_product_fits({.rows = 64, .inner = 3000, .cols = 64, .a_transposed = true,
                                 .b_transposed = true}));
  EXPECT_EQ(amx_product_fits({.rows = 2048, .inner = 3072, .cols = 768, .b_transposed = true}),
            amx_in_use());
}

// BERT's products as the backward and forward spell them, bf16 into f32, through the CPU backend
// against the reference: X^T dY with the tokens of [batch, seq, hidden] contracted, a plain a^T b,
// x W^T + bias (in f32 and cast to bf16), dY W + the residual's gradient over a 2048-wide inner
// dim, and a product of bf16 dtype. On AMX these are amx_product's, elsewhere oneDNN's.
TEST(MatrixProducts, BertsProductsThroughTheBackendMatchReference) {
  Graph graph;
  testing::Feeds feeds(graph, 11);
  Value x = feeds.any(DType::bf16, {2, 550, 96}), dy = feeds.any(DType::bf16, {2, 550, 160});
  Value a = feeds.any(DType::bf16, {1030, 64}), b = feeds.any(DType::bf16, {1030, 32});
  Value h = feeds.any(DType::bf16, {2, 32, 2048}), w2 = feeds.any(DType::bf16, {96, 2048});
  Value bias = feeds.any(DType::f32, {96}), w1 = feeds.any(DType::bf16, {2048, 96});
  Value residual = feeds.any(DType::f32, {2, 32, 96});
  Value forward = dot_general(h, w2, {{}, {}, {2}, {1}}, DType::f32) +
                  broadcast_in_dim(bias, {2, 32, 96}, {2});
  Value data_gradient = dot_general(h, w1, {{}, {}, {2}, {0}}, DType::f32) + residual;
  Value w3 = feeds.any(DType::bf16, {96, 2048});
  Value projection = cast(dot_general(h, w3, {{}, {}, {2}, {1}}, DType::f32) +  // into attention
                              broadcast_in_dim(bias, {2, 32, 96}, {2}),
                          DType::bf16);
  testing::expect_matches_reference(
      graph,
      {dot_general(x, dy, {{}, {}, {0, 1}, {0, 1}}, DType::f32),
       dot_general(a, b, {{}, {}, {0}, {0}}, DType::f32), forward, data_gradient, projection,
       dot_general(h, w2, {{}, {}, {2}, {1}}, DType::bf16)},
      feeds.arguments(), {}, 40.0);
}

}  // namespace
}  // namespace kiln::cpu
