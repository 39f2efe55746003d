// Internal: matrix products of bf16 values on AMX tiles (tdpbf16ps: exact bf16 products summed in
// f32, the numerics of oneDNN's bf16 matmul), for the fused attention's blocks
// (kernels_attention.inc), whose bf16 operands sit in f32 buffers. The same contract as
// vdpbf16ps_gemm_accumulate (bf16_block_products.h).
#pragma once

#include <cstdint>

namespace kiln::cpu {

// The 32-bit words of scratch amx_gemm_accumulate needs for products up to rows x inner x cols.
int64_t amx_pack_words(int64_t rows, int64_t inner, int64_t cols);

// c[rows x cols] += a[rows x inner] b[inner x cols], row-major with leading dims lda, ldb, ldc, a
// stored transposed ([inner x rows]) when a_transposed. Every value of a and b must be a bf16
// number (an f32 whose low 16 bits are zero). Only where the process may use AMX
// (detected_cpu_isa() is avx512_core_amx).
void amx_gemm_accumulate(int64_t rows, int64_t inner, int64_t cols, const float* a, int64_t lda,
                         bool a_transposed, const float* b, int64_t ldb, float* c, int64_t ldc,
                         uint32_t* pack);

}  // namespace kiln::cpu
