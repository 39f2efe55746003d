// AMX products (amx_block_products.h). The operands are packed into bf16 first, zero-padded to
// whole 32 x 32 blocks of c and 32-deep steps of the inner dim: a as rows of bf16 [rows][inner],
// b as the pairs (b[2p][j], b[2p + 1][j]) in [inner / 2][cols] words (the layout tdpbf16ps reads
// its second operand in). Each 32 x 32 block of c is 2 x 2 tiles of 16 x 16 f32 (tmm0-3) summed
// over the inner dim from two tiles of a (tmm4-5) and two of b (tmm6-7), stored to scratch and
// added to c. The tile configuration is loaded on every call: oneDNN's AMX matmuls, on the same
// threads, load their own.
#include "kiln/backends/cpu/amx_block_products.h"

#include <bit>

#include "kiln/ir/error.h"

#if defined(__x86_64__) && (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 11))
#define KILN_AMX_PRODUCTS 1
#include <immintrin.h>
#define KILN_AMX_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,amx-tile,amx-bf16")))
#else
#define KILN_AMX_PRODUCTS 0
#endif

namespace kiln::cpu {
namespace {

constexpr int64_t kBlock = 32;  // rows and columns of c per 2 x 2 tiles, and inner dim per step

int64_t padded(int64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

}  // namespace

int64_t amx_pack_words(int64_t rows, int64_t inner, int64_t cols) {
  int64_t m = padded(rows), k = padded(inner), n = padded(cols);
  return m * k / 2 + k / 2 * n + m * n;  // a's bf16, b's pairs, c's f32 block
}

#if KILN_AMX_PRODUCTS

namespace {

// LDTILECFG's 64 bytes: palette 1, every tile 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};

  TileConfig() {
    for (int t = 0; t < 8; ++t) {
      bytes_per_row[t] = 64;
      rows[t] = 16;
    }
  }
};

// The bf16 (the high 16 bits) of 16 bf16 numbers held as f32. (The zero-masked forms of the
// shift and the narrowing: GCC 12 warns of the unmasked ones' undefined pass-through.)
KILN_AMX_TARGET inline __m512i high_halves_in_words(__m512 x) {
  return _mm512_maskz_srli_epi32(__mmask16{0xFFFF}, _mm512_castps_si512(x), 16);
}

KILN_AMX_TARGET inline __m256i high_halves(__m512 x) {
  return _mm512_maskz_cvtepi32_epi16(__mmask16{0xFFFF}, high_halves_in_words(x));
}

__mmask16 lanes_below(int64_t count) {
  return count >= 16 ? __mmask16{0xFFFF}
                     : count <= 0 ? __mmask16{0} : static_cast<__mmask16>((1u << count) - 1);
}

// a as bf16 [m][k] (row-major, zero-padded), from a stored as is or transposed.
KILN_AMX_TARGET void pack_a(int64_t rows, int64_t inner, const float* a, int64_t lda,
                            bool transposed, int64_t m, int64_t k, uint16_t* out) {
  if (transposed) {
    std::fill(out, out + m * k, uint16_t{0});
    for (int64_t p = 0; p < inner; ++p) {
      const float* column = a + p * lda;  // a's column p: element r of the stored row p
      for (int64_t r = 0; r < rows; ++r) {
        out[r * k + p] = static_cast<uint16_t>(std::bit_cast<uint32_t>(column[r]) >> 16);
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
  const int64_t a_stride = k * 2, b_stride = n * 4, c_stride = n * 4;  // bytes per tile row
  for (int64_t i = 0; i < m; i += kBlock) {
    for (int64_t j = 0; j < n; j += kBlock) {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
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
      _tile_stored(0, sums + i * n + j, c_stride);
      _tile_stored(1, sums + i * n + j + 16, c_stride);
      _tile_stored(2, sums + (i + 16) * n + j, c_stride);
      _tile_stored(3, sums + (i + 16) * n + j + 16, c_stride);
    }
  }
  _tile_release();

  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; j += 16) {
      __mmask16 lanes = lanes_below(cols - j);
      __m512 sum = _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, c + r * ldc + j),
                                 _mm512_loadu_ps(sums + r * n + j));
      _mm512_mask_storeu_ps(c + r * ldc + j, lanes, sum);
    }
  }
}

#else

void amx_gemm_accumulate(int64_t, int64_t, int64_t, const float*, int64_t, bool, const float*,
                         int64_t, float*, int64_t, uint32_t*) {
  fail("amx_gemm_accumulate", "this build has no AMX intrinsics");
}

#endif

}  // namespace kiln::cpu
