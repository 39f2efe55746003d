// AMX products (amx_products.h). b is packed into scratch first, as 16-column panels of pairs,
// [cols / 16][inner / 2][16] words (b[2p][j] in the low half, b[2p + 1][j] in the high: the layout
// tdpbf16ps reads its second operand in); a transposed a too, as whole tiles, [rows / 16]
// [inner / 32][16][32] bf16, each tile 1 KiB in a row (pairs along the inner dim from two rows of
// a, transposed in registers). An a as stored is read in place, a tile's rows lda apart. The
// inner dim is padded to whole 32s with zeros where it is packed.
//
// Each 32 x 32 block of c is 2 x 2 tiles of f32 (tmm0-3), started from zeros, the bias (a tile
// load with a row stride of 0) or the addend, and summed into over a chunk of the inner dim from
// two tiles of a (tmm4-5) and two of b (tmm6-7), the loads interleaved with the products that wait
// on them (loading all four first ran at 1.2 TFLOP/s, interleaved 1.6, on 2048 x 768 x 768). The
// blocks of c are numbered in column-chunk-major order and a thread takes runs of them
// (parallel_for), so that a chunk of b's panels stays in its L2 while it goes down a.
//
// In BERT-base --bf16's step (KILN_CPU_PROFILE, 2 Sapphire Rapids cores, packing included), per
// product, oneDNN 2.6 -> these: the weight gradients 768 x 2048 x 3072 8.8 -> 6.1 ms,
// 3072 x 2048 x 768 8.1 -> 5.8, 768 x 2048 x 768 1.87 -> 1.48; 2048 x 3072 x 768 with an added
// tensor 6.7 -> 5.2 and with a bias 5.9 -> 5.1; 2048 x 768 x 3072 with a bias 5.3 -> 5.3 and
// without 5.5 -> 4.7; 2048 x 768 x 768 with a bias 1.3-1.5 -> 1.2, with an added tensor 1.5-2.3 ->
// 1.2-1.8. Alone (operands in cache, cold between runs), oneDNN's packed-weight kernels win the
// last three (2048 x 768 x 768: 1.0-1.3 ms against 1.6), and these reach about 2 TFLOP/s, its
// best about 2.5.
#include "kiln/backends/cpu/amx_products.h"

#include <algorithm>
#include <cstddef>

#include "kiln/backends/cpu/amx_target.h"
#include "kiln/backends/cpu/amx_tile_config.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/ir/error.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kBlock = 32;           // rows and columns of c per 2 x 2 tiles; inner per step
constexpr int64_t kInnerChunk = 1024;    // inner values summed per pass over a block of c
constexpr int64_t kColumnChunk = 256;    // columns of c whose panels of b a thread keeps in L2

int64_t padded_inner(int64_t inner) { return (inner + kBlock - 1) / kBlock * kBlock; }

// The bytes of the packed a^T (a_transposed only), whole cache lines, then b's panels.
int64_t a_tiles_bytes(const MatrixProduct& product) {
  return product.a_transposed ? whole_lines(product.rows * padded_inner(product.inner) * 2) : 0;
}

}  // namespace

bool amx_product_fits(const MatrixProduct& product) {
  const auto& [rows, inner, cols, a_transposed, b_transposed, lda, ldb, ldc, start, bf16] =
      product;
  bool inner_read_in_32s = !a_transposed || b_transposed;  // a in place, or b from its rows
  return KILN_AMX_PRODUCTS && effective_cpu_isa() == CpuIsa::avx512_core_amx && rows > 0 &&
         cols > 0 && inner > 0 && rows % kBlock == 0 && cols % kBlock == 0 &&
         (!inner_read_in_32s || inner % kBlock == 0);
}

int64_t amx_product_scratch_bytes(const MatrixProduct& product) {
  return a_tiles_bytes(product) + whole_lines(padded_inner(product.inner) * product.cols * 2);
}

#if KILN_AMX_PRODUCTS

namespace {

// 16 bf16 of a row (zeros for a row past the inner dim) widened to the low halves of 16 words.
// (The zero-masked forms of the widening and the shift below: GCC 12 warns of the unmasked ones'
// undefined pass-through.)
KILN_AMX_TARGET inline __m512i row_words(const uint16_t* row, bool inside) {
  if (!inside) return _mm512_setzero_si512();
  return _mm512_maskz_cvtepu16_epi32(__mmask16{0xFFFF},
                                     _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)));
}

// The words (even[j], odd[j]) of 16 columns from rows `even` and `even + 1` of x (leading dim ld).
KILN_AMX_TARGET inline __m512i pair_words(const uint16_t* x, int64_t ld, int64_t even,
                                          int64_t inner, int64_t column) {
  __m512i low = row_words(x + even * ld + column, even < inner);
  __m512i high = row_words(x + (even + 1) * ld + column, even + 1 < inner);
  return _mm512_or_si512(low, _mm512_maskz_slli_epi32(__mmask16{0xFFFF}, high, 16));
}

// a^T's tiles for the inner values [32 s, 32 s + 32), s in [begin, end): all of a's rows of
// those 32 inner values are read once, each 16 x 32 tile written whole.
KILN_AMX_TARGET void pack_a_tiles(int64_t rows, int64_t inner, int64_t k, const uint16_t* a,
                                  int64_t lda, uint16_t* tiles, int64_t begin, int64_t end) {
  const int64_t steps = k / kBlock;
  for (int64_t s = begin; s < end; ++s) {
    for (int64_t r = 0; r < rows; r += 16) {
      __m512i words[16];  // words[j] lane i: (a[p + 2j][r + i], a[p + 2j + 1][r + i])
      for (int j = 0; j < 16; ++j) words[j] = pair_words(a, lda, s * kBlock + 2 * j, inner, r);
      transpose_words(words);  // words[i]: tile row i
      uint16_t* tile = tiles + (r / 16 * steps + s) * 16 * kBlock;
      for (int i = 0; i < 16; ++i) {
        _mm512_storeu_si512(tile + i * kBlock, words[i]);
      }
    }
  }
}

// b's panels for the pairs [begin, end) of the inner dim: rows read in order, each 16 columns'
// words written to their panel.
KILN_AMX_TARGET void pack_b_panels(int64_t inner, int64_t k, int64_t cols, const uint16_t* b,
                                   int64_t ldb, uint32_t* panels, int64_t begin, int64_t end) {
  const int64_t pairs = k / 2;
  for (int64_t p = begin; p < end; ++p) {
    for (int64_t j = 0; j < cols; j += 16) {
      _mm512_storeu_si512(panels + (j / 16 * pairs + p) * 16, pair_words(b, ldb, 2 * p, inner, j));
    }
  }
}

// b's panels for the pairs [16 q, 16 q + 16) of the inner dim, q in [begin, end), from b stored
// transposed ([cols x inner], inner whole 32s): the pairs are the 32-bit words of b's rows, so 16
// rows of 16 words each, transposed in registers, are 16 rows of a panel.
KILN_AMX_TARGET void pack_b_panels_from_rows(int64_t k, int64_t cols, const uint16_t* b,
                                             int64_t ldb, uint32_t* panels, int64_t begin,
                                             int64_t end) {
  const int64_t pairs = k / 2;
  for (int64_t q = begin; q < end; ++q) {
    for (int64_t j = 0; j < cols; j += 16) {
      __m512i words[16];  // words[r]: the pairs 16 q .. 16 q + 15 of b's row j + r
      for (int r = 0; r < 16; ++r) words[r] = _mm512_loadu_si512(b + (j + r) * ldb + 32 * q);
      transpose_words(words);  // words[i]: pair 16 q + i of the 16 columns
      uint32_t* panel = panels + (j / 16 * pairs + 16 * q) * 16;
      for (int i = 0; i < 16; ++i) _mm512_storeu_si512(panel + i * 16, words[i]);
    }
  }
}

// Where a's tiles are: tile (row tile t, inner step s) at base + t * tile_rows + s * step
// elements, its rows `stride` bytes apart.
struct ATiles {
  const uint16_t* base;
  int64_t tile_rows, step, stride;
};

// The 32 x 32 blocks of c [begin, end) in column-chunk-major order (a chunk's blocks row block by
// row block), each summed over the whole inner dim in passes of kInnerChunk (in one pass for a bf16
// c, which holds no partial sums), then stored to c (a bf16 c through a block of f32 sums).
KILN_AMX_TARGET void multiply_blocks(const MatrixProduct& product, int64_t k, ATiles a,
                                     const uint32_t* b_panels, const float* start, void* c,
                                     int64_t begin, int64_t end) {
  static const TileConfig config;
  _tile_loadconfig(&config);
  constexpr int64_t chunk_blocks = kColumnChunk / kBlock;
  const int64_t ldc = product.ldc, row_blocks = product.rows / kBlock;
  const int64_t col_blocks = product.cols / kBlock, pairs = k / 2, c_stride = ldc * 4;
  const int64_t pass = product.bf16_result ? k : kInnerChunk;
  alignas(64) float sums[kBlock * kBlock];
  for (int64_t p0 = 0; p0 < k; p0 += pass) {
    const int64_t p1 = std::min(k, p0 + pass);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t chunk = item / (row_blocks * chunk_blocks);
      const int64_t width = std::min(chunk_blocks, col_blocks - chunk * chunk_blocks);
      const int64_t local = item - chunk * row_blocks * chunk_blocks;
      const int64_t i = local / width * kBlock, j = (chunk * chunk_blocks + local % width) * kBlock;
      float* out = product.bf16_result ? sums : static_cast<float*>(c) + i * ldc + j;
      const int64_t out_ld = product.bf16_result ? kBlock : ldc, out_stride = out_ld * 4;
      if (p0 == 0 && product.start == MatrixProduct::Start::zeros) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
      } else if (p0 == 0 && product.start == MatrixProduct::Start::bias) {
        _tile_loadd(0, start + j, 0);
        _tile_loadd(1, start + j + 16, 0);
        _tile_loadd(2, start + j, 0);
        _tile_loadd(3, start + j + 16, 0);
      } else if (p0 == 0) {
        const float* addend = start + i * ldc + j;
        _tile_loadd(0, addend, c_stride);
        _tile_loadd(1, addend + 16, c_stride);
        _tile_loadd(2, addend + 16 * ldc, c_stride);
        _tile_loadd(3, addend + 16 * ldc + 16, c_stride);
      } else {
        _tile_loadd(0, out, out_stride);
        _tile_loadd(1, out + 16, out_stride);
        _tile_loadd(2, out + 16 * out_ld, out_stride);
        _tile_loadd(3, out + 16 * out_ld + 16, out_stride);
      }
      const uint16_t* a0 = a.base + i / 16 * a.tile_rows;
      const uint16_t* a1 = a0 + a.tile_rows;
      const uint32_t* b0 = b_panels + j / 16 * pairs * 16;
      const uint32_t* b1 = b0 + pairs * 16;
      for (int64_t p = p0; p < p1; p += kBlock) {
        _tile_loadd(4, a0 + p / kBlock * a.step, a.stride);
        _tile_loadd(6, b0 + p / 2 * 16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_loadd(7, b1 + p / 2 * 16, 64);
        _tile_dpbf16ps(1, 4, 7);
        _tile_loadd(5, a1 + p / kBlock * a.step, a.stride);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      _tile_stored(0, out, out_stride);
      _tile_stored(1, out + 16, out_stride);
      _tile_stored(2, out + 16 * out_ld, out_stride);
      _tile_stored(3, out + 16 * out_ld + 16, out_stride);
      if (product.bf16_result) {
        uint16_t* words = static_cast<uint16_t*>(c) + i * ldc + j;
        for (int64_t r = 0; r < kBlock; ++r) {
#pragma omp simd
          for (int64_t e = 0; e < kBlock; ++e) {
            words[r * ldc + e] = round_bf16(sums[r * kBlock + e]);
          }
        }
      }
    }
  }
  _tile_release();
}

// Calls body(begin, end) over [0, n): split across the kernel threads, or on this thread.
template <typename Body>
void run_split(bool on_threads, int64_t n, int64_t grain, const Body& body) {
  if (on_threads) {
    parallel_for(n, grain, body);
  } else if (n > 0) {
    body(int64_t{0}, n);
  }
}

KILN_AMX_TARGET void compute(const MatrixProduct& product, const uint16_t* a, const uint16_t* b,
                             const float* start, void* c, std::byte* scratch, bool on_threads) {
  const auto& [rows, inner, cols, a_transposed, b_transposed, lda, ldb, ldc, start_kind, bf16] =
      product;
  const int64_t k = padded_inner(inner);
  ATiles a_tiles{a, 16 * lda, kBlock, lda * 2};
  if (a_transposed) {
    auto* tiles = reinterpret_cast<uint16_t*>(scratch);
    scratch += a_tiles_bytes(product);
    run_split(on_threads, k / kBlock, grain_for(rows * kBlock), [&](int64_t begin, int64_t end) {
      pack_a_tiles(rows, inner, k, a, lda, tiles, begin, end);
    });
    a_tiles = {tiles, k * 16, 16 * kBlock, 64};
  }
  auto* b_panels = reinterpret_cast<uint32_t*>(scratch);
  if (b_transposed) {
    run_split(on_threads, k / kBlock, grain_for(cols * kBlock), [&](int64_t begin, int64_t end) {
      pack_b_panels_from_rows(k, cols, b, ldb, b_panels, begin, end);
    });
  } else {
    run_split(on_threads, k / 2, grain_for(cols * 2), [&](int64_t begin, int64_t end) {
      pack_b_panels(inner, k, cols, b, ldb, b_panels, begin, end);
    });
  }
  run_split(on_threads, rows / kBlock * (cols / kBlock), 1, [&](int64_t begin, int64_t end) {
    multiply_blocks(product, k, a_tiles, b_panels, start, c, begin, end);
  });
}

}  // namespace

void amx_product(const MatrixProduct& product, const uint16_t* a, const uint16_t* b,
                 const float* start, void* c, std::byte* scratch) {
  compute(product, a, b, start, c, scratch, true);
}

void amx_product_here(const MatrixProduct& product, const uint16_t* a, const uint16_t* b,
                      const float* start, void* c, std::byte* scratch) {
  compute(product, a, b, start, c, scratch, false);
}

#else

void amx_product(const MatrixProduct&, const uint16_t*, const uint16_t*, const float*, void*,
                 std::byte*) {
  fail("amx_product", "this build has no AMX intrinsics");
}

void amx_product_here(const MatrixProduct&, const uint16_t*, const uint16_t*, const float*, void*,
                      std::byte*) {
  fail("amx_product_here", "this build has no AMX intrinsics");
}

#endif

}  // namespace kiln::cpu
