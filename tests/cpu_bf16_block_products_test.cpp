// The fused attention's bf16 products, vdpbf16ps (bf16_block_products.h) and AMX tiles
// (amx_block_products.h): against a double-precision product of the same bf16 values, at block
// shapes with odd inner dims, partial column vectors and tiles, and rows outside whole tiles, with
// a read as stored and transposed; and which the attention uses at which level (the ISA in use,
// under KILN_MAX_CPU_ISA) and the backend's --bf16 with it: vdpbf16ps only where it beats the
// FMAs (bf16_products.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kiln/backends/cpu/amx_block_products.h"
#include "kiln/backends/cpu/bf16_block_products.h"
#include "kiln/backends/cpu/bf16_products.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "support/bf16_words.h"

namespace kiln::cpu {
namespace {

// `count` bf16 numbers in [-2, 2) as f32 (low 16 bits zero) from Philox stream `stream`.
std::vector<float> bf16_values(int64_t count, uint32_t stream) {
  std::vector<float> values;
  for (uint16_t word : testing::random_bf16_words(count, stream)) {
    values.push_back(testing::bf16_word_value(word));
  }
  return values;
}

// Checks `products` against double-precision sums of the same bf16 values.
void expect_exact_products_in_f32_sums(const Bf16BlockProducts& products) {
  struct Shape3 {
    int64_t rows, inner, cols;
  };
  for (Shape3 s : {Shape3{64, 64, 64}, Shape3{7, 5, 70}, Shape3{5, 64, 17}, Shape3{1, 1, 1},
                   Shape3{64, 33, 64}, Shape3{40, 96, 48}}) {
    for (bool transposed : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << s.rows << "x" << s.inner << "x" << s.cols << (transposed ? " a^T" : ""));
      // Leading dims wider than the blocks, as the kernels' views of a head's keys are.
      int64_t lda = (transposed ? s.rows : s.inner) + 3, ldb = s.cols + 5, ldc = s.cols + 2;
      std::vector<float> a = bf16_values((transposed ? s.inner : s.rows) * lda, 1);
      std::vector<float> b = bf16_values(s.inner * ldb, 2);
      std::vector<float> c = bf16_values(s.rows * ldc, 3);
      std::vector<float> before = c;
      std::vector<uint32_t> pack(static_cast<size_t>(products.pack_words(s.rows, s.inner,
                                                                         s.cols)));
      products.accumulate(s.rows, s.inner, s.cols, a.data(), lda, transposed, b.data(), ldb,
                          c.data(), ldc, pack.data());
      for (int64_t r = 0; r < s.rows; ++r) {
        for (int64_t j = 0; j < ldc; ++j) {
          size_t at = static_cast<size_t>(r * ldc + j);
          if (j >= s.cols) {  // past the block: untouched
            ASSERT_EQ(c[at], before[at]) << r << ", " << j;
            continue;
          }
          double want = before[at], magnitude = std::abs(before[at]);
          for (int64_t k = 0; k < s.inner; ++k) {
            double term = static_cast<double>(transposed ? a[k * lda + r] : a[r * lda + k]) *
                          b[static_cast<size_t>(k * ldb + j)];
            want += term;
            magnitude += std::abs(term);
          }
          // Exact products, f32 sums: at most one f32 rounding per sum of the terms' magnitude.
          ASSERT_NEAR(c[at], want, static_cast<double>(s.inner + 1) * 0x1p-24 * magnitude)
              << r << ", " << j;
        }
      }
    }
  }
}

TEST(Bf16BlockProducts, Vdpbf16psMatchDoubleProductsOfTheSameValues) {
  if (detected_cpu_isa() < CpuIsa::avx512_core_bf16) {
    GTEST_SKIP() << "this CPU has no AVX512_BF16";
  }
  expect_exact_products_in_f32_sums({&bf16_gemm_accumulate, &bf16_pack_words});
}

TEST(Bf16BlockProducts, AmxTilesMatchDoubleProductsOfTheSameValues) {
  if (detected_cpu_isa() < CpuIsa::avx512_core_amx) GTEST_SKIP() << "this CPU has no AMX";
  expect_exact_products_in_f32_sums({&amx_gemm_accumulate, &amx_pack_words});
}

// Under KILN_MAX_CPU_ISA (tests/CMakeLists.txt runs it again under avx512_core_bf16).
TEST(Bf16BlockProducts, AttentionUsesTheBestTheIsaInUseHas) {
  Bf16BlockProducts products = attention_bf16_products();
  switch (effective_cpu_isa()) {
    case CpuIsa::avx512_core_amx:
      EXPECT_EQ(products.accumulate, &amx_gemm_accumulate);
      EXPECT_EQ(products.pack_words, &amx_pack_words);
      break;
    case CpuIsa::avx512_core_bf16:
      if (vdpbf16ps_pays(detected_cpu_features())) {
        EXPECT_EQ(products.accumulate, &bf16_gemm_accumulate);
        EXPECT_EQ(products.pack_words, &bf16_pack_words);
      } else {
        EXPECT_EQ(products.accumulate, nullptr);
        EXPECT_EQ(products.pack_words, nullptr);
      }
      break;
    default:
      EXPECT_EQ(products.accumulate, nullptr);
      EXPECT_EQ(products.pack_words, nullptr);
  }
}

TEST(Bf16Products, Vdpbf16psPaysOnAmdsCores) {
  CpuFeatures zen4{.x86_64_v3 = true, .x86_64_v4 = true, .avx512_bf16 = true, .amd = true};
  EXPECT_TRUE(vdpbf16ps_pays(zen4));
  CpuFeatures sapphire_rapids = zen4;
  sapphire_rapids.amd = false;
  sapphire_rapids.amx = true;
  EXPECT_FALSE(vdpbf16ps_pays(sapphire_rapids));
  CpuFeatures zen3 = zen4;
  zen3.x86_64_v4 = zen3.avx512_bf16 = false;
  EXPECT_FALSE(vdpbf16ps_pays(zen3));
}

TEST(Bf16Products, RatesAreMeasuredWhereTheCpuHasVdpbf16ps) {
  VectorUnitRates rates = vector_unit_rates();
  if (detected_cpu_isa() >= CpuIsa::avx512_core_bf16) {
    EXPECT_GT(rates.bf16_dot_gflops, 1.0);
    EXPECT_GT(rates.fma_gflops, 1.0);
  } else {
    EXPECT_EQ(rates.bf16_dot_gflops, 0.0);
    EXPECT_EQ(rates.fma_gflops, 0.0);
  }
}

// Under KILN_MAX_CPU_ISA too (oneDNN takes the cap): --bf16 multiplies in bf16 on AMX, and on
// vdpbf16ps where it pays; below, and where it does not, it rounds and multiplies in fp32.
TEST(Bf16Products, BackendMultipliesInBf16WhereItPays) {
  switch (effective_cpu_isa()) {
    case CpuIsa::avx512_core_amx: EXPECT_TRUE(cpu_has_bf16_products()); break;
    case CpuIsa::avx512_core_bf16:
      EXPECT_EQ(cpu_has_bf16_products(), vdpbf16ps_pays(detected_cpu_features()));
      break;
    default: EXPECT_FALSE(cpu_has_bf16_products());
  }
}

}  // namespace
}  // namespace kiln::cpu
