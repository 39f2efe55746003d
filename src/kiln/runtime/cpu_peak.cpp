// FMA and bf16-dot throughput kernels, each compiled for its instruction set and run only where
// the CPU backend uses it (the build itself targets baseline x86-64): under KILN_MAX_CPU_ISA, the
// peak of the capped machine.
#include "kiln/runtime/cpu_peak.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <thread>
#include <vector>

#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/ir/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Independent accumulators per thread: enough to cover the FMA latency on both FMA ports; 12 for
// AVX2, whose 16 registers also hold the two operands.
constexpr int kZmmChains = 16, kYmmChains = 12;
constexpr long kIterations = 25'000'000;

#if defined(__x86_64__)

// A lane of the chains' sum, returned so that the compiler keeps them (GCC 12 warns wrongly about
// _mm512_reduce_add_ps).
__attribute__((target("avx512f"))) float first_lane(__m512 sum) {
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  return lanes[0];
}

// Each iteration issues `kZmmChains` vfmadd231ps zmm: 32 FLOP each (16 lanes, multiply and add).
__attribute__((target("avx512f"))) float zmm_fma_chains(long iterations) {
  __m512 chains[kZmmChains];
  __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
  for (int j = 0; j < kZmmChains; ++j) chains[j] = _mm512_set1_ps(static_cast<float>(j));
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kZmmChains; ++j) chains[j] = _mm512_fmadd_ps(chains[j], x, y);
    asm volatile("" : "+v"(x));  // keeps the compiler from folding the chains
  }
  __m512 sum = chains[0];
  for (int j = 1; j < kZmmChains; ++j) sum = _mm512_add_ps(sum, chains[j]);
  return first_lane(sum);
}

// vfmadd231ps ymm: 16 FLOP each.
__attribute__((target("avx2,fma"))) float ymm_fma_chains(long iterations) {
  __m256 chains[kYmmChains];
  __m256 x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(0.9999999f);
  for (int j = 0; j < kYmmChains; ++j) chains[j] = _mm256_set1_ps(static_cast<float>(j));
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kYmmChains; ++j) chains[j] = _mm256_fmadd_ps(chains[j], x, y);
    asm volatile("" : "+x"(x));
  }
  __m256 sum = chains[0];
  for (int j = 1; j < kYmmChains; ++j) sum = _mm256_add_ps(sum, chains[j]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return lanes[0];
}

// vdpbf16ps zmm: 64 FLOP each (32 bf16 pairs multiplied and added into 16 f32 lanes).
__attribute__((target("avx512f,avx512bf16"))) float zmm_bf16_dot_chains(long iterations) {
  __m512 chains[kZmmChains];
  auto one = (__m512bh)_mm512_set1_epi16(0x3f80);  // bf16 1.0 in every lane
  __m512bh x = one, y = one;
  for (int j = 0; j < kZmmChains; ++j) chains[j] = _mm512_set1_ps(static_cast<float>(j));
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kZmmChains; ++j) chains[j] = _mm512_dpbf16_ps(chains[j], x, y);
    asm volatile("" : "+v"(x));
  }
  __m512 sum = chains[0];
  for (int j = 1; j < kZmmChains; ++j) sum = _mm512_add_ps(sum, chains[j]);
  return first_lane(sum);
}

// AMX tile matrix multiplies: 6 accumulator tiles of 16 x 16 f32, each tdpbf16ps adding the
// product of a 16 x 32 bf16 tile and a 32 x 16 one: 16 * 16 * 32 * 2 = 16,384 FLOP each.
constexpr int kAmxChains = 6;
// Each tdpbf16ps takes 16 cycles or so: fewer iterations than the vector kernels for similar times.
constexpr long kAmxIterationsDivisor = 16;
constexpr double kAmxFlop = 16.0 * 16.0 * 32.0 * 2.0;

__attribute__((target("amx-tile,amx-bf16"))) float amx_bf16_chains(long iterations) {
  alignas(64) unsigned char config[64] = {};
  config[0] = 1;  // palette 1
  for (int tile = 0; tile < 8; ++tile) {
    config[16 + 2 * tile] = 64;  // bytes per row
    config[48 + tile] = 16;      // rows
  }
  _tile_loadconfig(config);
  alignas(64) uint16_t ones[16 * 32];
  std::fill(std::begin(ones), std::end(ones), uint16_t{0x3f80});  // bf16 1.0
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  for (long i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 6, 7);
    _tile_dpbf16ps(1, 6, 7);
    _tile_dpbf16ps(2, 6, 7);
    _tile_dpbf16ps(3, 6, 7);
    _tile_dpbf16ps(4, 6, 7);
    _tile_dpbf16ps(5, 6, 7);
  }
  alignas(64) float out[16 * 16];
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

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

// GFLOP/s of `kernel` run on `threads` threads at once, the best of three.
double best_gflops(const std::function<float(long)>& kernel, int threads, double flop_per_iteration) {
  double best = 0.0;
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::vector<std::thread> workers;
    std::vector<float> sinks(static_cast<size_t>(threads));
    Clock::time_point start = Clock::now();
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] { sinks[static_cast<size_t>(t)] = kernel(kIterations); });
    }
    for (std::thread& worker : workers) worker.join();
    double seconds = seconds_since(start);
    best = std::max(best, flop_per_iteration * static_cast<double>(kIterations) * threads /
                              seconds / 1e9);
  }
  return best;
}

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
    peak.fp32_gflops = best_gflops(zmm_fma_chains, threads, 32.0 * kZmmChains);
  } else if (isa >= cpu::CpuIsa::avx2) {
    peak.fp32_kernel = "avx2 ymm fma";
    peak.fp32_gflops = best_gflops(ymm_fma_chains, threads, 16.0 * kYmmChains);
  }
  // bf16: the fastest unit the CPU has, as oneDNN's bf16 matrix multiplies use it.
  if (isa >= cpu::CpuIsa::avx512_core_amx) {
    peak.bf16_kernel = "amx tdpbf16ps";
    auto amx = [](long n) { return amx_bf16_chains(n / kAmxIterationsDivisor); };
    peak.bf16_gflops = best_gflops(amx, threads, kAmxFlop * kAmxChains / kAmxIterationsDivisor);
  } else if (isa >= cpu::CpuIsa::avx512_core_bf16) {
    peak.bf16_kernel = "avx512_bf16 zmm vdpbf16ps";
    peak.bf16_gflops = best_gflops(zmm_bf16_dot_chains, threads, 64.0 * kZmmChains);
  }
#endif
  return peak;
}

}  // namespace kiln
