// Internal: matrix products of bf16 operands into f32 on AMX tiles, which the CPU backend runs
// --bf16's products on where AMX is in use (kernels_dot.cpp), in place of oneDNN 2.6's matmul: in
// a training step on 2 Sapphire Rapids cores they beat it on every product of BERT they take. Its
// transposed-lhs matmul (the weight gradients: a sum over the tokens of activations times
// cotangents, both stored token-major) ran at 1.1-1.3 TFLOP/s; its bias and binary-add post-ops
// and the per-step packing of the weights cost it most of its lead on the others.
#pragma once

#include <cstddef>

#include "kiln/backends/cpu/matrix_product.h"

namespace kiln::cpu {

// Whether amx_product can run this product in this process: Kiln's kernels use AMX
// (effective_cpu_isa() is avx512_core_amx), c is whole 32 x 32 blocks, and the inner dim is
// whole 32s where a tile reads an operand in place (a as stored, or b transposed).
bool amx_product_fits(const MatrixProduct& product);

// The scratch bytes amx_product needs (the operands it packs into tiles).
int64_t amx_product_scratch_bytes(const MatrixProduct& product);

// Computes `product` from bf16 a and b (their 16-bit words), the f32 `start` values (none for
// zeros) and into c (f32, or bf16 words where bf16_result): exact products summed in f32, as
// oneDNN's bf16 matmul sums them. On kernel_threads() OpenMP threads. Only where amx_product_fits.
void amx_product(const MatrixProduct& product, const uint16_t* a, const uint16_t* b,
                 const float* start, void* c, std::byte* scratch);

// amx_product on the calling thread alone (the fused attention's blocks, one thread's each).
void amx_product_here(const MatrixProduct& product, const uint16_t* a, const uint16_t* b,
                      const float* start, void* c, std::byte* scratch);

}  // namespace kiln::cpu
