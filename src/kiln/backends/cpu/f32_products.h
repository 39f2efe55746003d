// Internal: f32 matrix products on Kiln's own AVX2 register tiles, which the CPU backend runs the
// f32 products of the smaller BERT configurations on where its kernels use AVX2
// (kernels_dot.cpp), in place of oneDNN 2.6's jit sgemm, its only f32 matmul below AVX-512: the
// forward's projections and the data gradients, a bias or an added tensor included at no cost
// (oneDNN's post-ops cost it 2-15%). Measured on 2 cores of an AVX-512 Xeon capped at AVX2
// (KILN_MAX_CPU_ISA=avx2), not yet on an AVX2-only CPU: in the training step at 16 x 128
// (KILN_CPU_PROFILE) those products took BERT-tiny 23.3-23.7 -> 20.9-22.1 ms and BERT-mini
// 168.7-174.8 -> 161.7-162.8 ms; the steps, alternated 5 times, medians 58.2 -> 56.7 ms (tiny)
// and 350.4 -> 346.0 ms (mini); BERT-base's was within noise.
#pragma once

#include <cstddef>

#include "kiln/backends/cpu/matrix_product.h"

namespace kiln::cpu {

// Whether f32_product runs this product in this process: Kiln's kernels use AVX2 (the level
// loop_kernel_isa() names, so KILN_MAX_CPU_ISA caps it), a is stored as is (the weight
// gradients' transposed a ran 10-25% slower in the step than on oneDNN), c is kept in f32, and
// the packed b (inner x cols) is at most 2^21 values: alone, BERT-base's 768 x 3072 weights ran
// 12% slower than on oneDNN.
bool f32_product_fits(const MatrixProduct& product);

// The scratch bytes f32_product needs (the panels it packs b into).
int64_t f32_product_scratch_bytes(const MatrixProduct& product);

// Computes `product` from f32 a and b, the f32 `start` values (none for zeros) and into f32 c,
// on kernel_threads() OpenMP threads. Runs AVX2 code: only on a CPU with AVX2 (f32_product_fits
// checks that, and more).
void f32_product(const MatrixProduct& product, const float* a, const float* b,
                 const float* start, float* c, std::byte* scratch);

}  // namespace kiln::cpu
