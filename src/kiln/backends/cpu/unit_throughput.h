// Internal: what this CPU's multiply units do per second, from chains of independent
// multiply-adds (as ../shared/bench/peer/peak_fma.cpp measures them): the peak `kiln bench`
// divides by (runtime/cpu_peak.h), and what decides whether --bf16 multiplies in bf16
// (bf16_products.h). Each kernel is compiled for its own instruction set: run one only where the
// CPU has it (the AMX one after the AMX permission, which detected_cpu_isa() asks for).
#pragma once

namespace kiln::cpu {

// A throughput kernel: `run` issues `iterations` rounds of multiply-adds on the calling thread
// and returns one lane of their sums (so that none is optimised away).
struct ThroughputKernel {
  float (*run)(long iterations) = nullptr;
  double flop_per_iteration = 0.0;
};

ThroughputKernel zmm_fma_kernel();       // 16 chains of vfmadd231ps zmm
ThroughputKernel ymm_fma_kernel();       // 12 chains of vfmadd231ps ymm (AVX2's 16 registers)
ThroughputKernel zmm_bf16_dot_kernel();  // 16 chains of vdpbf16ps zmm
ThroughputKernel amx_bf16_kernel();      // 6 tiles of tdpbf16ps, every 16th iteration

// GFLOP/s of `kernel` run for `iterations` on each of `threads` threads at once, the best of
// three runs. `threads` >= 1.
double best_gflops(const ThroughputKernel& kernel, int threads, long iterations);

}  // namespace kiln::cpu
