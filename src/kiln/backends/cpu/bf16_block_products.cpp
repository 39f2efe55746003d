// vdpbf16ps products (bf16_block_products.h). Operands are packed first: b as [inner / 2][cols]
// words, each the bf16 pair (b[2p][j], b[2p + 1][j]) (cols padded to whole tiles with zeros), a as
// the pairs (a[r][2p], a[r][2p + 1]) (an odd inner dim padded with a zero); then each 4 x 64 tile
// of c stays in registers over the whole inner dim, as gemm_accumulate's f32 tiles do.
#include "kiln/backends/cpu/bf16_block_products.h"

#include <bit>

#include "kiln/backends/cpu/amx_block_products.h"
#include "kiln/backends/cpu/bf16_products.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/lane_masks.h"
#include "kiln/ir/error.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KILN_BF16_PRODUCTS 1
#include <immintrin.h>
#define KILN_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#else
#define KILN_BF16_PRODUCTS 0
#endif

namespace kiln::cpu {
namespace {

constexpr int kTileRows = 4;
constexpr int kVectors = 4;  // of 16 f32
constexpr int64_t kTileCols = 16 * kVectors;

int64_t pairs_of(int64_t inner) { return (inner + 1) / 2; }
int64_t padded_cols(int64_t cols) { return (cols + kTileCols - 1) / kTileCols * kTileCols; }

// The high 16 bits of x (x's bf16 when x is a bf16 number) in the low half, and of y in the high.
inline uint32_t bf16_pair(float x, float y) {
  return (std::bit_cast<uint32_t>(x) >> 16) | (std::bit_cast<uint32_t>(y) & 0xFFFF0000u);
}

}  // namespace

int64_t bf16_pack_words(int64_t rows, int64_t inner, int64_t cols) {
  return pairs_of(inner) * (rows + padded_cols(cols));
}

#if KILN_BF16_PRODUCTS

// AMX tiles do 16x an FMA's products on a Sapphire-Rapids-class Xeon; vdpbf16ps only where it
// beats the FMAs (vdpbf16ps_pays: AMD Zen 4 and 5 by the instruction tables, not Intel's cores).
Bf16BlockProducts attention_bf16_products() {
  switch (effective_cpu_isa()) {
    case CpuIsa::avx512_core_amx: return {&amx_gemm_accumulate, &amx_pack_words};
    case CpuIsa::avx512_core_bf16:
      if (!vdpbf16ps_pays(detected_cpu_features())) return {};
      return {&bf16_gemm_accumulate, &bf16_pack_words};
    default: return {};
  }
}

namespace {

// c's rows [0, kRows) x cols [j, j + 64) (lanes masked by `masks`) += a_pairs b_pairs, where row
// r's pair p is a_pairs[r * row_step + p * pair_step] and b's pair row p starts at
// b_pairs[p * ldb]. 16 accumulators (4 x 32 tiles, 8, ran as fast on the Xeon, where
// vdpbf16ps's throughput bounds the loop).
template <int kRows>
KILN_BF16_TARGET void tile(int64_t pairs, const uint32_t* a_pairs, int64_t row_step,
                           int64_t pair_step, const uint32_t* b_pairs, int64_t ldb, float* c,
                           int64_t ldc, const __mmask16* masks) {
  __m512 acc[kRows][kVectors];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) {
      acc[r][v] = _mm512_maskz_loadu_ps(masks[v], c + r * ldc + v * 16);
    }
  }
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh b[kVectors];
    for (int v = 0; v < kVectors; ++v) {
      b[v] = (__m512bh)_mm512_loadu_si512(b_pairs + p * ldb + v * 16);
    }
    for (int r = 0; r < kRows; ++r) {
      auto a = (__m512bh)_mm512_set1_epi32(static_cast<int>(a_pairs[r * row_step + p * pair_step]));
      for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], a, b[v]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) {
      _mm512_mask_storeu_ps(c + r * ldc + v * 16, masks[v], acc[r][v]);
    }
  }
}

}  // namespace

KILN_BF16_TARGET void bf16_gemm_accumulate(int64_t rows, int64_t inner, int64_t cols,
                                           const float* a, int64_t lda, bool a_transposed,
                                           const float* b, int64_t ldb, float* c, int64_t ldc,
                                           uint32_t* pack) {
  int64_t pairs = pairs_of(inner), ld_pack = padded_cols(cols);
  uint32_t* b_pairs = pack;
  uint32_t* a_pairs = pack + pairs * ld_pack;
  for (int64_t p = 0; p < pairs; ++p) {
    const float* even = b + 2 * p * ldb;
    const float* odd = 2 * p + 1 < inner ? even + ldb : nullptr;
    uint32_t* out = b_pairs + p * ld_pack;
    for (int64_t j = 0; j < cols; ++j) out[j] = bf16_pair(even[j], odd ? odd[j] : 0.0f);
    for (int64_t j = cols; j < ld_pack; ++j) out[j] = 0;
  }
  // a's pairs: [rows][pairs] from a row-major a, [pairs][rows] from a transposed one, so that
  // both are written in the order a is read.
  int64_t row_step = a_transposed ? 1 : pairs, pair_step = a_transposed ? rows : 1;
  for (int64_t p = 0; p < pairs; ++p) {
    bool odd = 2 * p + 1 < inner;
    if (a_transposed) {
      const float* even_row = a + 2 * p * lda;
      for (int64_t r = 0; r < rows; ++r) {
        a_pairs[p * rows + r] = bf16_pair(even_row[r], odd ? even_row[lda + r] : 0.0f);
      }
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = a + r * lda + 2 * p;
        a_pairs[r * pairs + p] = bf16_pair(row[0], odd ? row[1] : 0.0f);
      }
    }
  }
  for (int64_t j = 0; j < cols; j += kTileCols) {
    __mmask16 masks[kVectors];
    for (int v = 0; v < kVectors; ++v) masks[v] = lanes_below(cols - j - 16 * v);
    int64_t r = 0;
    for (; r + kTileRows <= rows; r += kTileRows) {
      tile<kTileRows>(pairs, a_pairs + r * row_step, row_step, pair_step, b_pairs + j, ld_pack,
                      c + r * ldc + j, ldc, masks);
    }
    for (; r < rows; ++r) {
      tile<1>(pairs, a_pairs + r * row_step, row_step, pair_step, b_pairs + j, ld_pack,
              c + r * ldc + j, ldc, masks);
    }
  }
}

#else

Bf16BlockProducts attention_bf16_products() { return {}; }

void bf16_gemm_accumulate(int64_t, int64_t, int64_t, const float*, int64_t, bool, const float*,
                          int64_t, float*, int64_t, uint32_t*) {
  fail("bf16_gemm_accumulate", "this build has no vdpbf16ps");
}

#endif

}  // namespace kiln::cpu
