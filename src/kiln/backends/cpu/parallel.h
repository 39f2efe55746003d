// Internal: how the kernels' loops use the machine — split across the OpenMP threads (the runtime
// oneDNN uses too) where the work pays for waking them. (Their vector width: isa_variants.h.)
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace kiln::cpu {

// Elements per thread below which an elementwise loop stays on one thread.
inline constexpr int64_t kGrain = 1 << 14;

// The grain, in items, of a loop over items of `size` elements each.
inline int64_t grain_for(int64_t size) {
  return std::max<int64_t>(1, kGrain / std::max<int64_t>(1, size));
}

// The threads kernels use: OpenMP's count at first use (OMP_NUM_THREADS, else one per core),
// fixed from then on, so that per-thread scratch sized at compile time always suffices.
inline int kernel_threads() {
  static const int threads = omp_get_max_threads();
  return threads;
}

// Calls body(begin, end) on disjoint ranges covering [0, n): one range when n < 2 * grain, else
// one contiguous range per thread (omp_get_thread_num() < kernel_threads()). Bodies must not
// throw.
template <typename Body>
void parallel_for(int64_t n, int64_t grain, const Body& body) {
  int threads = kernel_threads();
  if (n < 2 * grain || threads == 1) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  int64_t chunks = std::min<int64_t>(threads, n / grain);
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) body(n * c / chunks, n * (c + 1) / chunks);
}

}  // namespace kiln::cpu
