// f32 products on AVX2 register tiles (f32_products.h), blocked as BLIS blocks its sgemm: c in
// 6 x 16 tiles, each kept in 12 of the 16 ymm registers over a chunk of the inner dim while a
// 16-column panel of b (packed: [inner][16], zeros past the last column) and 6 rows of a feed it,
// one broadcast a value per row and step. The threads first pack all of b between them (at most
// 2^21 values), then take blocks of c as they get free (parallel_for_units): up to 96 rows by 256
// columns (or, where c is wider than tall, every row by one panel's columns), each gone over 256
// inner values at a time, a read in place, each panel (16 KiB, in L1) against the block's tiles
// in turn. c starts from zeros, the bias or the addend in the first inner chunk's tiles, and
// from itself in the next ones; a block's sums do not depend on the thread that computes it.
//
// Measured alone (a standalone copy of this kernel against oneDNN in one process, 2 cores of an
// AVX-512 Xeon capped at AVX2, medians of 31 runs): inner chunks of 128 lost 5-10% to 256 and
// 512, which tied; 96 rows a chunk against 192 and 384, and column chunks of 256 to 4096, within
// noise (256 keeps the packed chunk inside the 512 KiB L2 of AMD's Zen 3 too); splitting c by
// columns wherever it had 2 panels a thread, rather than by rows unless wider than tall, lost
// 2-6% on BERT-tiny's and -mini's products. Blocks taken as threads get free, against each
// thread packing b for itself and computing a fixed half of c (the previous design), both in one
// harness, alternated, medians of 380 runs on BERT-tiny's and -mini's twelve product shapes: on
// a quiet host 150-165 GFLOP/s either way (within 1.5%); in a noisy hour, when the two cores'
// speeds drift apart, up to 8% faster (mini's data gradients 139 -> 146-150). GCC 12 at -O3
// kept a tile's accumulators in memory as well as in registers, storing them on every step (half
// the speed), unless the loops over them are unrolled first: the unroll pragmas in multiply_tile.
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

constexpr int kTileRows = 6;
constexpr int kLanes = 8;        // floats per ymm register
constexpr int kTileVectors = 2;  // ymm registers per row of a tile
constexpr int kTileCols = kLanes * kTileVectors;
constexpr int64_t kInnerChunk = 256;
constexpr int64_t kColChunk = 256;
constexpr int64_t kLargestRhs = int64_t{1} << 21;  // values of b, inner x cols

}  // namespace

bool f32_product_fits(const MatrixProduct& product) {
  return KILN_ISA_VARIANTS && loop_kernel_isa() == CpuIsa::avx2 && !product.bf16_result &&
         !product.a_transposed && product.rows > 0 && product.cols > 0 && product.inner > 0 &&
         product.inner * product.cols <= kLargestRhs;
}

int64_t f32_product_scratch_bytes(const MatrixProduct& product) {
  return (product.cols + kTileCols - 1) / kTileCols * kTileCols * product.inner * 4;  // b's panels
}

#if KILN_ISA_VARIANTS
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")

namespace {

constexpr int64_t kChunkTiles = 16;  // tiles of rows in a block of c, at most

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

// b's columns [j0, j0 + width) (width at most 16) as the panel [inner][16], zeros past `width`.
void pack_panel(const MatrixProduct& product, const float* b, int64_t j0, int64_t width,
                float* panel) {
  const int64_t inner = product.inner;
  if (product.b_transposed) {  // b's columns are rows of its storage
    for (int64_t e = 0; e < kTileCols; ++e) {
      if (e >= width) {
        for (int64_t p = 0; p < inner; ++p) panel[p * kTileCols + e] = 0;
        continue;
      }
      const float* column = b + (j0 + e) * product.ldb;
      for (int64_t p = 0; p < inner; ++p) panel[p * kTileCols + e] = column[p];
    }
    return;
  }
  for (int64_t p = 0; p < inner; ++p) {
    const float* row = b + p * product.ldb + j0;
    float* out = panel + p * kTileCols;
    if (width == kTileCols) {  // a copy of constant size: inlined, not a call
      std::memcpy(out, row, 4 * kTileCols);
    } else {
      for (int64_t e = 0; e < kTileCols; ++e) out[e] = e < width ? row[e] : 0;
    }
  }
}

// c's rows [row_begin, row_end) by columns [col_begin, col_end) (col_begin a whole panel), from
// b's panels [cols / 16][inner][16].
void multiply_block(const MatrixProduct& product, const float* a, const float* panels,
                    const float* start, float* c, int64_t row_begin, int64_t row_end,
                    int64_t col_begin, int64_t col_end) {
  alignas(64) float edge[kTileRows * kTileCols];  // a tile past c's last column
  const int64_t ldc = product.ldc;
  for (int64_t j0 = col_begin; j0 < col_end; j0 += kColChunk) {
    const int64_t width = std::min(kColChunk, col_end - j0);
    for (int64_t p0 = 0; p0 < product.inner; p0 += kInnerChunk) {
      const int64_t inner = std::min(kInnerChunk, product.inner - p0);
      for (int64_t j = 0; j < width; j += kTileCols) {
        const int64_t column = j0 + j;
        const float* panel = panels + (column / kTileCols * product.inner + p0) * kTileCols;
        const int64_t cols = std::min<int64_t>(kTileCols, width - j);
        for (int64_t i = row_begin; i < row_end; i += kTileRows) {
          const int count = static_cast<int>(std::min<int64_t>(kTileRows, row_end - i));
          const float* a_rows = a + i * product.lda + p0;
          float* tile = c + i * ldc + column;
          const bool first = p0 == 0;
          const bool per_row = first && product.start == MatrixProduct::Start::addend;
          const float* from = nullptr;  // c itself, or the addend's rows copied there first
          if (first && product.start == MatrixProduct::Start::zeros) from = kZeroRow;
          if (first && product.start == MatrixProduct::Start::bias) from = start + column;
          if (cols == kTileCols) {
            if (per_row && start != c) {
              for (int r = 0; r < count; ++r) {
                std::memcpy(tile + r * ldc, start + (i + r) * ldc + column, 4 * kTileCols);
              }
            }
            kTiles[count - 1](a_rows, product.lda, panel, inner, tile, ldc, from);
            continue;
          }
          // The last columns: through `edge`, holding what c starts from.
          for (int r = 0; r < count; ++r) {
            const float* values = from != nullptr ? from
                                  : per_row       ? start + (i + r) * ldc + column
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

}  // namespace

void f32_product(const MatrixProduct& product, const float* a, const float* b,
                 const float* start, float* c, std::byte* scratch) {
  // The threads pack b's panels between them, then take blocks of c as they get free: up to
  // kChunkTiles tiles of rows by kColChunk columns, row after row of blocks (a thread's first
  // share is the rows the kernel before it most likely wrote from that core: column after column
  // lost 1-3% on BERT-tiny's 2,048 x 512 products), or, where c is wider than tall, every row by
  // one panel's columns.
  const int64_t col_panels = (product.cols + kTileCols - 1) / kTileCols;
  auto* panels = reinterpret_cast<float*>(scratch);
  const int threads = kernel_threads();
  const bool split_cols = product.rows < product.cols && col_panels >= 2 * threads;
  // Row blocks of whole tiles, as even as they come and a multiple of the threads in number, so
  // that the threads' first shares are equal (96-row blocks had given BERT-tiny's 2,048 rows
  // 1,056 to one thread and 992 to the other: 2-4% slower on a quiet host).
  const int64_t tiles = (product.rows + kTileRows - 1) / kTileRows;
  const int64_t row_blocks =
      split_cols ? 1 : ((tiles + kChunkTiles - 1) / kChunkTiles + threads - 1) / threads * threads;
  const int64_t block_cols = split_cols ? kTileCols : kColChunk;
  const int64_t col_blocks = (product.cols + block_cols - 1) / block_cols;
  parallel_for_units(col_panels, col_panels, [&](int64_t j, int64_t, int64_t) {
    const int64_t column = j * kTileCols;
    pack_panel(product, b, column, std::min<int64_t>(kTileCols, product.cols - column),
               panels + j * product.inner * kTileCols);
  });
  const int64_t blocks = row_blocks * col_blocks;
  parallel_for_units(blocks, blocks, [&](int64_t unit, int64_t, int64_t) {
    const int64_t row_block = unit / col_blocks, j0 = unit % col_blocks * block_cols;
    const int64_t i0 = tiles * row_block / row_blocks * kTileRows;
    const int64_t i1 = std::min(product.rows, tiles * (row_block + 1) / row_blocks * kTileRows);
    multiply_block(product, a, panels, start, c, i0, i1, j0,
                   std::min(product.cols, j0 + block_cols));
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
