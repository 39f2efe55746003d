// The throughput kernels of unit_throughput.h, each run only where the CPU backend uses its
// instruction set: under KILN_MAX_CPU_ISA, the peak of the capped machine.
#include "kiln/runtime/cpu_peak.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/unit_throughput.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr long kIterations = 25'000'000;  // about 0.1 s a kernel on a 3 GHz core

#if defined(__x86_64__)

// The core clock from a dependent chain of 64-bit imul (3 cycles each on every recent x86 core).
double measure_clock_ghz(long iterations) {
  unsigned long x = 3;
  Clock::time_point start = Clock::now();
  for (long i = 0; i < iterations; ++i) {
    asm volatile(
        "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
        "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
        : "+r"(x));
  }
  return 3.0 * 8.0 * static_cast<double>(iterations) / seconds_since(start) / 1e9;
}

#endif

std::string cpu_model_name() {
  FILE* file = std::fopen("/proc/cpuinfo", "r");
  if (file == nullptr) return "";
  char line[1024];
  std::string model;
  while (std::fgets(line, sizeof line, file)) {
    if (std::strncmp(line, "model name", 10) != 0) continue;
    if (const char* colon = std::strchr(line, ':')) {
      model = colon + 1;
      model.erase(0, model.find_first_not_of(' '));
      while (!model.empty() && (model.back() == '\n' || model.back() == ' ')) model.pop_back();
    }
    break;
  }
  std::fclose(file);
  return model;
}

}  // namespace

CpuPeak measure_cpu_peak(int threads) {
  check(threads >= 1, "cpu_peak", "needs at least one thread, got ", threads);
  CpuPeak peak;
  peak.cpu_model = cpu_model_name();
  peak.threads = threads;
#if defined(__x86_64__)
  measure_clock_ghz(kIterations / 2);  // lets the clock ramp up first
  for (int repeat = 0; repeat < 3; ++repeat) {
    peak.clock_ghz = std::max(peak.clock_ghz, measure_clock_ghz(kIterations / 2));
  }
  // The AMX permission was asked for when the ISA was detected.
  const cpu::CpuIsa isa = cpu::effective_cpu_isa();
  if (isa >= cpu::CpuIsa::avx512_core) {
    peak.fp32_kernel = "avx512 zmm fma";
    peak.fp32_gflops = cpu::best_gflops(cpu::zmm_fma_kernel(), threads, kIterations);
  } else if (isa >= cpu::CpuIsa::avx2) {
    peak.fp32_kernel = "avx2 ymm fma";
    peak.fp32_gflops = cpu::best_gflops(cpu::ymm_fma_kernel(), threads, kIterations);
  }
  // bf16: the fastest unit the CPU has, as oneDNN's bf16 matrix multiplies use it.
  if (isa >= cpu::CpuIsa::avx512_core_amx) {
    peak.bf16_kernel = "amx tdpbf16ps";
    peak.bf16_gflops = cpu::best_gflops(cpu::amx_bf16_kernel(), threads, kIterations);
  } else if (isa >= cpu::CpuIsa::avx512_core_bf16) {
    peak.bf16_kernel = "avx512_bf16 zmm vdpbf16ps";
    peak.bf16_gflops = cpu::best_gflops(cpu::zmm_bf16_dot_kernel(), threads, kIterations);
  }
#endif
  return peak;
}

}  // namespace kiln
