// AMX products (amx_block_products.h). The operands are packed into bf16 first, zero-padded to
// whole 32 x 32 blocks of c and 32-deep steps of the inner dim: a as rows of bf16 [rows][inner],
// b as the pairs (b[2p][j], b[2p + 1][j]) in [inner / 2][cols] words (the layout tdpbf16ps reads
// its second operand in). Each 32 x 32 block of c is 2 x 2 tiles of 16 x 16 f32 (tmm0-3), loaded
// from c and summed into over the inner dim from two tiles of a (tmm4-5) and two of b (tmm6-7)
// (a block at c's edge: summed from zero in scratch, then added to c). The tile configuration is
// loaded on every call: oneDNN's AMX matmuls, on the same threads, load their own.
#include "kiln/backends/cpu/amx_block_products.h"

#include <algorithm>
#include <bit>

#include "kiln/backends/cpu/amx_target.h"
#include "kiln/backends/cpu/amx_tile_config.h"
#include "kiln/backends/cpu/lane_masks.h"
#include "kiln/ir/error.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kBlock = 32;  // rows and columns of c per 2 x 2 tiles, and inner dim per step

int64_t padded(int64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

}  // namespace

int64_t amx_pack_words(int64_t rows, int64_t inner, int64_t cols) {
  int64_t m = padded(rows), k = padded(inner), n = padded(cols);
  return m * k / 2 + k / 2 * n + kBlock * kBlock;  // a's bf16, b's pairs, a block of c's sums
}

#if KILN_AMX_PRODUCTS

namespace {

// The bf16 (the high 16 bits) of 16 bf16 numbers held as f32. (The zero-masked forms of the
// shift and the narrowing: GCC 12 warns of the unmasked ones' undefined pass-through.)
KILN_AMX_TARGET inline __m512i high_halves_in_words(__m512 x) {
  return _mm512_maskz_srli_epi32(__mmask16{0xFFFF}, _mm512_castps_si512(x), 16);
}

KILN_AMX_TARGET inline __m256i high_halves(__m512 x) {
  return _mm512_maskz_cvtepi32_epi16(__mmask16{0xFFFF}, high_halves_in_words(x));
}

// a as bf16 [m][k] (row-major, zero-padded), from a stored as is or transposed. A transposed a
// goes 16 rows by 32 inner values at a time: 32 loads of 16 rows (a's columns p, p + 1, ...), 16
// words of pairs (a[r][p], a[r][p + 1]) for 16 rows, transposed in registers to 16 rows of 16
// words each. Against scattering each word to its row (in perf, 16% of these products' time):
// BERT-large's attention gradient (bench_attention fused 2 bf16) 23.3 -> 22.6 ms a layer;
// BERT-base --bf16's twelve 128.4/122.6 -> 120.4/117.9 ms a step (KILN_CPU_PROFILE).
KILN_AMX_TARGET void pack_a(int64_t rows, int64_t inner, const float* a, int64_t lda,
                            bool transposed, int64_t m, int64_t k, uint16_t* out) {
  if (transposed) {
    auto* words = reinterpret_cast<uint32_t*>(out);
    const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
    for (int64_t r = 0; r < m; r += 16) {
      __mmask16 lanes = r < rows ? lanes_below(rows - r) : __mmask16{0};
      for (int64_t p = 0; p < k; p += 32) {
        __m512i pairs[16];
        for (int j = 0; j < 16; ++j) {
          int64_t even = p + 2 * j, odd = even + 1;
          __m512 low = _mm512_maskz_loadu_ps(even < inner ? lanes : __mmask16{0},
                                             a + even * lda + r);
          __m512i high_half = _mm512_castps_si512(
              _mm512_maskz_loadu_ps(odd < inner ? lanes : __mmask16{0}, a + odd * lda + r));
          pairs[j] = _mm512_or_si512(high_halves_in_words(low), _mm512_and_si512(high_half, high));
        }
        transpose_words(pairs);
        for (int i = 0; i < 16; ++i) {
          _mm512_storeu_si512(words + (r + i) * (k / 2) + p / 2, pairs[i]);
        }
      }
    }
    return;
  }
  for (int64_t r = 0; r < m; ++r) {
    uint16_t* row = out + r * k;
    for (int64_t p = 0; p < k; p += 16) {
      __mmask16 lanes = r < rows ? lanes_below(inner - p) : __mmask16{0};
      __m512 x = _mm512_maskz_loadu_ps(lanes, a + r * lda + p);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + p), high_halves(x));
    }
  }
}

// b as pairs [k / 2][n]: word (p, j) holds b[2p][j] in its low half and b[2p + 1][j] in its high.
KILN_AMX_TARGET void pack_b(int64_t inner, int64_t cols, const float* b, int64_t ldb, int64_t k,
                            int64_t n, uint32_t* out) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  for (int64_t p = 0; p < k / 2; ++p) {
    bool has_even = 2 * p < inner, has_odd = 2 * p + 1 < inner;
    for (int64_t j = 0; j < n; j += 16) {
      __mmask16 lanes = lanes_below(cols - j);
      __m512 even = _mm512_maskz_loadu_ps(has_even ? lanes : __mmask16{0}, b + 2 * p * ldb + j);
      __m512i odd = _mm512_castps_si512(
          _mm512_maskz_loadu_ps(has_odd ? lanes : __mmask16{0}, b + (2 * p + 1) * ldb + j));
      __m512i pair = _mm512_or_si512(high_halves_in_words(even), _mm512_and_si512(odd, high));
      _mm512_storeu_si512(out + p * n + j, pair);
    }
  }
}

// c[rows x cols] (leading dim ldc) += sums (a 32 x 32 block).
KILN_AMX_TARGET void add_block(const float* sums, int64_t rows, int64_t cols, float* c,
                               int64_t ldc) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; j += 16) {
      __mmask16 lanes = lanes_below(cols - j);
      __m512 sum = _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, c + r * ldc + j),
                                 _mm512_loadu_ps(sums + r * kBlock + j));
      _mm512_mask_storeu_ps(c + r * ldc + j, lanes, sum);
    }
  }
}

}  // namespace

KILN_AMX_TARGET void amx_gemm_accumulate(int64_t rows, int64_t inner, int64_t cols,
                                         const float* a, int64_t lda, bool a_transposed,
                                         const float* b, int64_t ldb, float* c, int64_t ldc,
                                         uint32_t* pack) {
  int64_t m = padded(rows), k = padded(inner), n = padded(cols);
  auto* a_bf16 = reinterpret_cast<uint16_t*>(pack);
  uint32_t* b_pairs = pack + m * k / 2;
  auto* sums = reinterpret_cast<float*>(b_pairs + k / 2 * n);
  pack_a(rows, inner, a, lda, a_transposed, m, k, a_bf16);
  pack_b(inner, cols, b, ldb, k, n, b_pairs);

  static const TileConfig config;
  _tile_loadconfig(&config);
  const int64_t a_stride = k * 2, b_stride = n * 4;  // bytes per tile row
  for (int64_t i = 0; i < m; i += kBlock) {
    for (int64_t j = 0; j < n; j += kBlock) {
      // A whole 32 x 32 block of c is summed into in place; one at c's edge goes through `sums`.
      bool whole = i + kBlock <= rows && j + kBlock <= cols;
      float* out = whole ? c + i * ldc + j : sums;
      const int64_t out_stride = (whole ? ldc : kBlock) * 4, down = 16 * (whole ? ldc : kBlock);
      if (whole) {
        _tile_loadd(0, out, out_stride);
        _tile_loadd(1, out + 16, out_stride);
        _tile_loadd(2, out + down, out_stride);
        _tile_loadd(3, out + down + 16, out_stride);
      } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
      }
      for (int64_t p = 0; p < k; p += kBlock) {
        _tile_loadd(4, a_bf16 + i * k + p, a_stride);
        _tile_loadd(5, a_bf16 + (i + 16) * k + p, a_stride);
        _tile_loadd(6, b_pairs + p / 2 * n + j, b_stride);
        _tile_loadd(7, b_pairs + p / 2 * n + j + 16, b_stride);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      _tile_stored(0, out, out_stride);
      _tile_stored(1, out + 16, out_stride);
      _tile_stored(2, out + down, out_stride);
      _tile_stored(3, out + down + 16, out_stride);
      if (!whole) add_block(sums, std::min(kBlock, rows - i), std::min(kBlock, cols - j),
                            c + i * ldc + j, ldc);
    }
  }
  _tile_release();
}

#else

void amx_gemm_accumulate(int64_t, int64_t, int64_t, const float*, int64_t, bool, const float*,
                         int64_t, float*, int64_t, uint32_t*) {
  fail("amx_gemm_accumulate", "this build has no AMX intrinsics");
}

#endif

}  // namespace kiln::cpu
