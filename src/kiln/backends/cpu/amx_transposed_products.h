// Internal: c = a^T b for bf16 a [inner x rows] and b [inner x cols] into f32 c, on AMX tiles: the
// weight gradients of --bf16's linear layers (a sum over the tokens of activations times
// cotangents, both stored token-major), where oneDNN 2.6's matmul with a transposed lhs runs at
// 1.1-1.3 TFLOP/s on 2 Sapphire Rapids cores against its 2.3-2.5 for the forward products.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::cpu {

// Whether amx_transposed_product takes these sizes (rows and cols whole 32 x 32 blocks of c) on
// this process: only where Kiln's kernels use AMX (effective_cpu_isa() is avx512_core_amx).
bool amx_transposed_product_fits(int64_t rows, int64_t inner, int64_t cols);

// The scratch bytes amx_transposed_product needs (a^T and b packed into tiles).
int64_t amx_transposed_product_scratch_bytes(int64_t rows, int64_t inner, int64_t cols);

// c[rows x cols] (leading dim ldc) = sum over p of a[p][r] b[p][j], for bf16 a (leading dim lda
// >= rows) and b (ldb >= cols) given as their 16-bit words; exact products summed in f32, as
// oneDNN's bf16 matmul sums them. Runs on kernel_threads() OpenMP threads. Only where
// amx_transposed_product_fits.
void amx_transposed_product(int64_t rows, int64_t inner, int64_t cols, const uint16_t* a,
                            int64_t lda, const uint16_t* b, int64_t ldb, float* c, int64_t ldc,
                            std::byte* scratch);

}  // namespace kiln::cpu
