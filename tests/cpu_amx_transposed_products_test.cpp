// The AMX weight-gradient products c = a^T b (amx_transposed_products.h): against double-precision
// sums of the same bf16 values, with leading dims wider than the operands, inner dims that are not
// whole tiles and that take more than one pass over c, and a last column chunk narrower than the
// others; when the CPU backend takes them (--bf16's transposed products where AMX is in use, also
// under KILN_MAX_CPU_ISA); and BERT's weight gradient X^T dY through the backend against the
// reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu_test_util.h"
#include "kiln/backends/cpu/amx_transposed_products.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "support/bf16_words.h"

namespace kiln::cpu {
namespace {

bool amx_in_use() { return effective_cpu_isa() == CpuIsa::avx512_core_amx; }

TEST(AmxTransposedProduct, MatchesDoubleSumsOfTheSameValues) {
  if (!amx_in_use()) GTEST_SKIP() << "AMX is not in use here (CPU or KILN_MAX_CPU_ISA)";
  struct Sizes {
    int64_t rows, inner, cols;
  };
  // One inner value; odd inner dims (padded with zeros); over 1024 (two passes over c, the
  // second adding to the first); 288 columns (a chunk of 256, then one of 32).
  for (Sizes s : {Sizes{32, 1, 32}, Sizes{64, 77, 96}, Sizes{96, 1100, 64}, Sizes{32, 45, 288}}) {
    SCOPED_TRACE(::testing::Message() << s.rows << "x" << s.inner << "x" << s.cols);
    ASSERT_TRUE(amx_transposed_product_fits(s.rows, s.inner, s.cols));
    int64_t lda = s.rows + 3, ldb = s.cols + 5, ldc = s.cols + 2;
    std::vector<uint16_t> a = testing::random_bf16_words(s.inner * lda, 1),
                          b = testing::random_bf16_words(s.inner * ldb, 2);
    std::vector<float> c(static_cast<size_t>(s.rows * ldc), 7.0f);
    std::vector<std::byte> scratch(
        static_cast<size_t>(amx_transposed_product_scratch_bytes(s.rows, s.inner, s.cols)));
    amx_transposed_product(s.rows, s.inner, s.cols, a.data(), lda, b.data(), ldb, c.data(), ldc,
                           scratch.data());
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t j = 0; j < ldc; ++j) {
        float got = c[static_cast<size_t>(r * ldc + j)];
        if (j >= s.cols) {  // past c's columns: untouched
          ASSERT_EQ(got, 7.0f) << r << ", " << j;
          continue;
        }
        double want = 0.0, magnitude = 0.0;
        for (int64_t p = 0; p < s.inner; ++p) {
          double term = static_cast<double>(testing::bf16_word_value(a[static_cast<size_t>(p * lda + r)])) *
                        testing::bf16_word_value(b[static_cast<size_t>(p * ldb + j)]);
          want += term;
          magnitude += std::abs(term);
        }
        // Exact products, f32 sums: at most one f32 rounding per term, of the terms' magnitude.
        ASSERT_NEAR(got, want, static_cast<double>(s.inner) * 0x1p-24 * magnitude)
            << r << ", " << j;
      }
    }
  }
}

TEST(AmxTransposedProduct, TakesWholeBlocksWhereAmxIsInUse) {
  EXPECT_EQ(amx_transposed_product_fits(768, 2048, 3072), amx_in_use());
  EXPECT_EQ(amx_transposed_product_fits(32, 5, 64), amx_in_use());
  EXPECT_FALSE(amx_transposed_product_fits(48, 2048, 3072));  // rows not whole blocks
  EXPECT_FALSE(amx_transposed_product_fits(768, 2048, 80));   // nor cols
  EXPECT_FALSE(amx_transposed_product_fits(0, 2048, 64));
}

// X^T dY as BERT's backward spells it (the tokens of [batch, seq, hidden] contracted) and as a
// plain transposed matrix, bf16 into f32, through the CPU backend against the reference: on AMX
// these are amx_transposed_product's, elsewhere oneDNN's.
TEST(AmxTransposedProduct, WeightGradientsThroughTheBackendMatchReference) {
  Graph graph;
  testing::Feeds feeds(graph, 11);
  Value x = feeds.any(DType::bf16, {2, 550, 96}), dy = feeds.any(DType::bf16, {2, 550, 160});
  Value a = feeds.any(DType::bf16, {1030, 64}), b = feeds.any(DType::bf16, {1030, 32});
  testing::expect_matches_reference(
      graph,
      {dot_general(x, dy, {{}, {}, {0, 1}, {0, 1}}, DType::f32),
       dot_general(a, b, {{}, {}, {0}, {0}}, DType::f32)},
      feeds.arguments(), {}, 20.0);
}

}  // namespace
}  // namespace kiln::cpu
