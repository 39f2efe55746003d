// Internal: whether --bf16 multiplies bf16 operands in hardware on this CPU (as capped by
// KILN_MAX_CPU_ISA and ONEDNN_MAX_CPU_ISA), which decides how the CPU backend runs it
// (BackendCapabilities::bf16_products) and which products the fused attention's blocks use; and
// the one line that says when it does not.
#pragma once

#include "kiln/backends/cpu/cpu_isa.h"

namespace kiln::cpu {

// Whether vdpbf16ps products beat rounding to bf16 and multiplying with FMAs: on AMD's cores with
// AVX512-BF16 (Zen 4 and 5), not on Intel's (bf16_products.cpp says why). Decided by the CPU, not
// by timing it, so that every run and every process on a machine takes the same path.
bool vdpbf16ps_pays(const CpuFeatures& features);

// One core's GFLOP/s of vdpbf16ps and of f32 FMAs (zmm), measured once in the process (about
// 30 ms; zeros below the avx512_core_bf16 level), for the notice below.
struct VectorUnitRates {
  double bf16_dot_gflops = 0.0;
  double fma_gflops = 0.0;
};
VectorUnitRates vector_unit_rates();

// AMX, or AVX512-BF16 where vdpbf16ps_pays(detected_cpu_features()), at oneDNN's ISA (which honours
// both caps).
bool cpu_has_bf16_products();

// Prints why --bf16 rounds to bf16 and multiplies in fp32 on this CPU, to stderr, the first time
// it is called in the process: "kiln: this CPU has no bf16 units (avx2); --bf16 rounds to bf16
// and multiplies in fp32", or, where vdpbf16ps does not pay, "kiln: this CPU's bf16 units are
// slow (avx512_core_bf16: vdpbf16ps 111 GFLOP/s a core, fp32 FMAs 218); --bf16 rounds ...".
void print_bf16_rounding_notice_once();

}  // namespace kiln::cpu
