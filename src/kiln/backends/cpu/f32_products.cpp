// f32 products on AVX2 register tiles (f32_products.h), blocked as BLIS blocks its sgemm: c in
// 6 x 16 tiles, each kept in 12 of the 16 ymm registers over a chunk of the inner dim while a
// 16-column panel of b (packed: [inner][16], zeros past the last column) and 6 rows of a feed it,
// one broadcast a value per row and step. A thread owns a slice of c's rows (or of its columns
// when c is wider than tall) and goes over it chunk by chunk: 256 columns of b packed (256 KiB,
// in L2), then 96 rows of a at a time, read in place, each panel of b (16 KiB, in L1) against
// those rows' tiles in turn. c starts from zeros, the bias or the addend in the first inner
// chunk's tiles, and from itself in the next ones.
//
// Measured alone (a standalone copy of this kernel against oneDNN in one process, 2 cores of an
// AVX-512 Xeon capped at AVX2, medians of 31 runs): inner chunks of 128 lost 5-10% to 256 and
// 512, which tied; 96 rows a chunk against 192 and 384, and column chunks of 256 to 4096, within
// noise (256 keeps the packed chunk inside the 512 KiB L2 of AMD's Zen 3 too); splitting c by
// columns wherever it had 2 panels a thread, rather than by rows unless wider than tall, lost
// 2-6% on BERT-tiny's and -mini's products. GCC 12 at -O3 kept a tile's accumulators in memory as
// well as in registers, storing them on every step (half the speed), unless the loops over them
// are unrolled first: the unroll pragmas in multiply_tile.
#include "kiln/backends/cpu/f32_products.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/ir/error.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kInnerChunk = 256;
constexpr int64_t kColChunk = 256;
constexpr int64_t kLargestRhs = int64_t{1} << 21;  // values of b, inner x cols

// Per thread: b's panels for one column chunk.
constexpr int64_t kThreadBytes = kInnerChunk * kColChunk * 4;

}  // namespace

bool f32_product_fits(const MatrixProduct& product) {
  return KILN_ISA_VARIANTS && loop_kernel_isa() == CpuIsa::avx2 && !product.bf16_result &&
         !product.a_transposed && product.rows > 0 && product.cols > 0 && product.inner > 0 &&
         product.inner * product.cols <= kLargestRhs;
}

int64_t f32_product_scratch_bytes(const MatrixProduct&) {
  return kernel_threads() * kThreadBytes;
}

#if KILN_ISA_VARIANTS
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")

namespace {

constexpr int kTileRows = 6;
constexpr int kLanes = 8;        // floats per ymm register
constexpr int kTileVectors = 2;  // ymm registers per row of a tile
constexpr int kTileCols = kLanes * kTileVectors;
constexpr int64_t kRowChunk = 16 * kTileRows;

// What a tile starts from where c starts from zeros.
const float kZeroRow[kTileCols] = {};

// c[R x 16] (leading dim ldc) = start + a b over `inner` steps: a's R rows lda apart, b's panel
// [inner][16]. start: c when null, else a row of 16 values for every row (kZeroRow for zeros,
// or the bias).
template <int R>
void multiply_tile(const float* a, int64_t lda, const float* panel, int64_t inner, float* c,
                   int64_t ldc, const float* start) {
  __m256 acc[R][kTileVectors];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < kTileVectors; ++v) {
      acc[r][v] = _mm256_loadu_ps(start != nullptr ? start + v * kLanes : c + r * ldc + v * kLanes);
    }
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < inner; ++p) {
    __m256 b0 = _mm256_loadu_ps(panel + p * kTileCols);
    __m256 b1 = _mm256_loadu_ps(panel + p * kTileCols + kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      __m256 x = _mm256_broadcast_ss(a + r * lda + p);
      acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < kTileVectors; ++v) {
      _mm256_storeu_ps(c + r * ldc + v * kLanes, acc[r][v]);
    }
  }
}

using TileFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t,
                        const float*);

// multiply_tile for 1 .. kTileRows rows (index rows - 1).
template <int... R>
constexpr std::array<TileFn, sizeof...(R)> tile_functions(std::integer_sequence<int, R...>) {
  return {{&multiply_tile<R + 1>...}};
}
constexpr auto kTiles = tile_functions(std::make_integer_sequence<int, kTileRows>{});

// b's rows [p0, p0 + inner) and columns [j0, j0 + width) as panels [width / 16][inner][16],
// zeros past `width`.
void pack_b(const MatrixProduct& product, const float* b, int64_t p0, int64_t inner, int64_t j0,
            int64_t width, float* panels) {
  for (int64_t j = 0; j < width; j += kTileCols) {
    float* panel = panels + j / kTileCols * inner * kTileCols;
    const int64_t cols = std::min<int64_t>(kTileCols, width - j);
    if (product.b_transposed) {  // b's columns are rows of its storage
      for (int64_t e = 0; e < kTileCols; ++e) {
        if (e >= cols) {
          for (int64_t p = 0; p < inner; ++p) panel[p * kTileCols + e] = 0;
          continue;
        }
        const float* column = b + (j0 + j + e) * product.ldb + p0;
        for (int64_t p = 0; p < inner; ++p) panel[p * kTileCols + e] = column[p];
      }
    } else {
      for (int64_t p = 0; p < inner; ++p) {
        const float* row = b + (p0 + p) * product.ldb + j0 + j;
        float* out = panel + p * kTileCols;
        if (cols == kTileCols) {  // a copy of constant size: inlined, not a call
          std::memcpy(out, row, 4 * kTileCols);
        } else {
          for (int64_t e = 0; e < kTileCols; ++e) out[e] = e < cols ? row[e] : 0;
        }
      }
    }
  }
}

// This thread's block of c: rows [row_begin, row_end) by columns [col_begin, col_end).
void multiply_block(const MatrixProduct& product, const float* a, const float* b,
                    const float* start, float* c, float* scratch, int64_t row_begin,
                    int64_t row_end, int64_t col_begin, int64_t col_end) {
  float* b_panels = scratch;
  alignas(64) float edge[kTileRows * kTileCols];  // a tile past c's last column
  const int64_t ldc = product.ldc;
  for (int64_t j0 = col_begin; j0 < col_end; j0 += kColChunk) {
    const int64_t width = std::min(kColChunk, col_end - j0);
    for (int64_t p0 = 0; p0 < product.inner; p0 += kInnerChunk) {
      const int64_t inner = std::min(kInnerChunk, product.inner - p0);
      pack_b(product, b, p0, inner, j0, width, b_panels);
      for (int64_t i0 = row_begin; i0 < row_end; i0 += kRowChunk) {
        const int64_t rows = std::min(kRowChunk, row_end - i0);
        for (int64_t j = 0; j < width; j += kTileCols) {
          const float* panel = b_panels + j / kTileCols * inner * kTileCols;
          const int64_t cols = std::min<int64_t>(kTileCols, width - j);
          const int64_t column = j0 + j;
          for (int64_t i = 0; i < rows; i += kTileRows) {
            const int count = static_cast<int>(std::min<int64_t>(kTileRows, rows - i));
            const float* a_rows = a + (i0 + i) * product.lda + p0;
            float* tile = c + (i0 + i) * ldc + column;
            const bool first = p0 == 0;
            const bool per_row = first && product.start == MatrixProduct::Start::addend;
            const float* from = nullptr;  // c itself, or the addend's rows copied there first
            if (first && product.start == MatrixProduct::Start::zeros) from = kZeroRow;
            if (first && product.start == MatrixProduct::Start::bias) from = start + column;
            if (cols == kTileCols) {
              if (per_row && start != c) {
                for (int r = 0; r < count; ++r) {
                  std::memcpy(tile + r * ldc, start + (i0 + i + r) * ldc + column, 4 * kTileCols);
                }
              }
              kTiles[count - 1](a_rows, product.lda, panel, inner, tile, ldc, from);
              continue;
            }
            // The last columns: through `edge`, holding what c starts from.
            for (int r = 0; r < count; ++r) {
              const float* values = from != nullptr ? from
                                    : per_row       ? start + (i0 + i + r) * ldc + column
                                                    : tile + r * ldc;
              for (int64_t e = 0; e < kTileCols; ++e) {
                edge[r * kTileCols + e] = e < cols ? values[e] : 0;
              }
            }
            kTiles[count - 1](a_rows, product.lda, panel, inner, edge, kTileCols, nullptr);
            for (int r = 0; r < count; ++r) {
              std::memcpy(tile + r * ldc, edge + r * kTileCols, static_cast<size_t>(cols) * 4);
            }
          }
        }
      }
    }
  }
}

}  // namespace

void f32_product(const MatrixProduct& product, const float* a, const float* b,
                 const float* start, float* c, std::byte* scratch) {
  const int threads = kernel_threads();
  // Rows split in whole tiles; columns in whole panels where c is wider than tall.
  const int64_t col_panels = (product.cols + kTileCols - 1) / kTileCols;
  const bool split_cols = product.rows < product.cols && col_panels >= 2 * threads;
  const int64_t units = split_cols ? col_panels : (product.rows + kTileRows - 1) / kTileRows;
  const int64_t unit = split_cols ? kTileCols : kTileRows;
  parallel_for(threads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t first = units * part / threads * unit;
      const int64_t last = units * (part + 1) / threads * unit;
      auto* mine = reinterpret_cast<float*>(scratch + part * kThreadBytes);
      if (split_cols) {
        multiply_block(product, a, b, start, c, mine, 0, product.rows, first,
                       std::min(last, product.cols));
      } else {
        multiply_block(product, a, b, start, c, mine, first, std::min(last, product.rows), 0,
                       product.cols);
      }
    }
  });
}

#pragma GCC pop_options

#else

void f32_product(const MatrixProduct&, const float*, const float*, const float*, float*,
                 std::byte*) {
  fail("f32_product", "this build has no AVX2 variant of Kiln's kernels");
}

#endif

}  // namespace kiln::cpu
