// This CPU's measured peak FLOP/s, as ../shared/bench/peer/peak_fma.cpp measures it: chains of
// independent FMA instructions (fp32) and bf16 products (AMX tile multiplies where the CPU has
// them, as oneDNN's bf16 matrix multiplies use them, else AVX512-BF16 dot products) on N threads,
// with the widest instructions the CPU backend uses (cpu_isa.h: the CPU's best, or the cap of
// KILN_MAX_CPU_ISA). What `kiln bench` divides by.
#pragma once

#include <string>

namespace kiln {

struct CpuPeak {
  std::string cpu_model;    // /proc/cpuinfo's model name
  int threads = 0;          // threads the kernels ran on, one chain set each
  double clock_ghz = 0.0;   // measured with a dependent imul chain (3 cycles each)
  std::string fp32_kernel;  // "avx512 zmm fma", "avx2 ymm fma", or empty when the CPU has no FMA
  double fp32_gflops = 0.0;
  std::string bf16_kernel;  // "amx tdpbf16ps", "avx512_bf16 zmm vdpbf16ps", or empty
  double bf16_gflops = 0.0;
};

// Best of three runs of each kernel, about 0.1 s each on a 3 GHz core. `threads` >= 1.
CpuPeak measure_cpu_peak(int threads);

}  // namespace kiln
