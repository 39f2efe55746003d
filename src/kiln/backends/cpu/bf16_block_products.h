// Internal: matrix products of bf16 values with AVX512_BF16's vdpbf16ps (pairs of bf16 products
// along the inner dim, exact, summed into f32: the numerics of oneDNN's bf16 matmul), for the
// fused attention's blocks (kernels_attention.inc), whose bf16 operands sit in f32 buffers.
#pragma once

#include <cstdint>

namespace kiln::cpu {

// A kind of bf16 block product: c[rows x cols] += a[rows x inner] b[inner x cols] (the contract
// of bf16_gemm_accumulate below), and the scratch words it needs for products up to a size.
struct Bf16BlockProducts {
  void (*accumulate)(int64_t rows, int64_t inner, int64_t cols, const float* a, int64_t lda,
                     bool a_transposed, const float* b, int64_t ldb, float* c, int64_t ldc,
                     uint32_t* pack) = nullptr;
  int64_t (*pack_words)(int64_t rows, int64_t inner, int64_t cols) = nullptr;
};

// The fused attention's products of bf16 operands at the ISA in use (under KILN_MAX_CPU_ISA): AMX
// tiles (amx_block_products.h) at avx512_core_amx, vdpbf16ps at avx512_core_bf16 where it beats
// the FMAs (vdpbf16ps_pays, bf16_products.h), none (null members: the kernels' f32 FMA loops)
// elsewhere or where this build cannot (GCC or clang on x86-64).
Bf16BlockProducts attention_bf16_products();

// The 32-bit words of scratch bf16_gemm_accumulate needs for products up to rows x inner x cols.
int64_t bf16_pack_words(int64_t rows, int64_t inner, int64_t cols);

// c[rows x cols] += a[rows x inner] b[inner x cols], row-major with leading dims lda, ldb, ldc, a
// stored transposed ([inner x rows]) when a_transposed. Every value of a and b must be a bf16
// number (an f32 whose low 16 bits are zero): they are packed as bf16 pairs into `pack`
// (bf16_pack_words(rows, inner, cols) words) without rounding. Only on CPUs with AVX512_BF16.
void bf16_gemm_accumulate(int64_t rows, int64_t inner, int64_t cols, const float* a, int64_t lda,
                          bool a_transposed, const float* b, int64_t ldb, float* c, int64_t ldc,
                          uint32_t* pack);

}  // namespace kiln::cpu
