// The throughput kernels (unit_throughput.h); the build itself targets baseline x86-64.
#include "kiln/backends/cpu/unit_throughput.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <thread>
#include <vector>

#include "kiln/backends/cpu/amx_tile_config.h"
#include "kiln/ir/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cpu {
namespace {

// Independent accumulators per thread: enough to cover the FMA latency on both FMA ports; 12 for
// AVX2, whose 16 registers also hold the two operands.
constexpr int kZmmChains = 16, kYmmChains = 12;

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
  static const TileConfig config;
  _tile_loadconfig(&config);
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

float amx_bf16_rounds(long iterations) {
  return amx_bf16_chains(iterations / kAmxIterationsDivisor);
}

#else

[[noreturn]] float no_kernel(long) { fail("unit_throughput", "this build has no x86-64 kernels"); }

#endif

using Clock = std::chrono::steady_clock;

}  // namespace

#if defined(__x86_64__)
ThroughputKernel zmm_fma_kernel() { return {&zmm_fma_chains, 32.0 * kZmmChains}; }
ThroughputKernel ymm_fma_kernel() { return {&ymm_fma_chains, 16.0 * kYmmChains}; }
ThroughputKernel zmm_bf16_dot_kernel() { return {&zmm_bf16_dot_chains, 64.0 * kZmmChains}; }
ThroughputKernel amx_bf16_kernel() {
  return {&amx_bf16_rounds, kAmxFlop * kAmxChains / kAmxIterationsDivisor};
}
#else
ThroughputKernel zmm_fma_kernel() { return {&no_kernel, 1.0}; }
ThroughputKernel ymm_fma_kernel() { return {&no_kernel, 1.0}; }
ThroughputKernel zmm_bf16_dot_kernel() { return {&no_kernel, 1.0}; }
ThroughputKernel amx_bf16_kernel() { return {&no_kernel, 1.0}; }
#endif

double best_gflops(const ThroughputKernel& kernel, int threads, long iterations) {
  check(threads >= 1, "unit_throughput", "needs at least one thread, got ", threads);
  double best = 0.0;
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::vector<std::thread> workers;
    std::vector<float> sinks(static_cast<size_t>(threads));
    Clock::time_point start = Clock::now();
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back(
          [&, t] { sinks[static_cast<size_t>(t)] = kernel.run(iterations); });
    }
    for (std::thread& worker : workers) worker.join();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, kernel.flop_per_iteration * static_cast<double>(iterations) * threads /
                              seconds / 1e9);
  }
  return best;
}

}  // namespace kiln::cpu
