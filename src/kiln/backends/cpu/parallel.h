// Internal: how the kernels' loops use the machine — split across the OpenMP threads (the runtime
// oneDNN uses too) where the work pays for waking them. (Their vector width: isa_variants.h.)
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace kiln::cpu {

// The fewest elements a unit of an elementwise loop holds: a loop of fewer than twice this stays
// on one thread.
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

// Units [0, n) handed out to the threads of one parallel region as they get free: thread t takes
// its own contiguous share (what a static split gives it) front to back, then units from the back
// of the share with the most left. On 2-core VMs the two threads' speed drifted apart by 5-15%
// over a kernel, which a static split turns into waiting: in BERT-tiny's step under the avx2 cap,
// `perf` found each thread idle in libgomp for 15% of its samples, the other one busy in products,
// attention or loops. What a unit computes must not depend on the thread that runs it (no
// per-thread partial sums), so that results stay the same from run to run.
class BalancedShares {
 public:
  // Shares for the first kMaxShares threads (on the stack: a steady run allocates nothing).
  static constexpr int kMaxShares = 64;

  BalancedShares(int64_t units, int threads) : count_(std::min(threads, kMaxShares)) {
    for (int t = 0; t < count_; ++t) {
      shares_[t].range.store(range(units * t / count_, units * (t + 1) / count_),
                             std::memory_order_relaxed);
    }
  }

  // The next unit for thread `thread` (any thread number: one without a share only steals), or
  // -1 when none is left.
  int64_t next(int thread) {
    if (thread < count_) {
      std::atomic<uint64_t>& own = shares_[thread].range;
      uint64_t r = own.load(std::memory_order_relaxed);
      while (begin(r) < end(r)) {
        if (own.compare_exchange_weak(r, range(begin(r) + 1, end(r)))) return begin(r);
      }
    }
    for (;;) {
      Share* victim = nullptr;
      uint64_t r = 0;
      for (int t = 0; t < count_; ++t) {
        uint64_t candidate = shares_[t].range.load(std::memory_order_relaxed);
        if (end(candidate) - begin(candidate) > (victim ? end(r) - begin(r) : 0)) {
          victim = &shares_[t];
          r = candidate;
        }
      }
      if (victim == nullptr) return -1;
      if (victim->range.compare_exchange_weak(r, range(begin(r), end(r) - 1))) return end(r) - 1;
    }
  }

 private:
  struct alignas(64) Share {
    std::atomic<uint64_t> range{0};  // [begin, end): begin in the low 32 bits
  };
  static uint64_t range(int64_t begin, int64_t end) {
    return static_cast<uint64_t>(begin) | static_cast<uint64_t>(end) << 32;
  }
  static int64_t begin(uint64_t r) { return static_cast<int64_t>(r & 0xffffffffu); }
  static int64_t end(uint64_t r) { return static_cast<int64_t>(r >> 32); }

  int count_;
  Share shares_[kMaxShares];
};

// The units parallel_for splits n items into: one when n < 2 * grain or the kernels run on one
// thread, else up to kUnitsPerThread a thread, each of at least `grain` items. It depends on n,
// grain and kernel_threads() only, so per-unit partial results are the same from run to run.
inline constexpr int64_t kUnitsPerThread = 16;

inline int64_t parallel_units(int64_t n, int64_t grain) {
  int threads = kernel_threads();
  if (n < 2 * grain || threads == 1) return n > 0 ? 1 : 0;
  return std::min(threads * kUnitsPerThread, n / grain);
}

// Calls body(unit, begin, end) once for each unit u < units, [begin, end) = [n u / units,
// n (u + 1) / units), on the kernel threads as they get free (BalancedShares), or on this thread
// when units is 1. A thread may run several units; a unit's results must not depend on the
// thread that runs it (partial sums belong to the unit, not to the thread). Bodies must not
// throw.
template <typename Body>
void parallel_for_units(int64_t n, int64_t units, const Body& body) {
  if (units <= 1) {
    if (n > 0) body(int64_t{0}, int64_t{0}, n);
    return;
  }
  int threads = kernel_threads();
  BalancedShares shares(units, threads);
#pragma omp parallel num_threads(static_cast<int>(std::min<int64_t>(threads, units)))
  {
    const int me = omp_get_thread_num();
    for (int64_t unit = shares.next(me); unit >= 0; unit = shares.next(me)) {
      body(unit, n * unit / units, n * (unit + 1) / units);
    }
  }
}

// Calls body(begin, end) on disjoint ranges covering [0, n), the parallel_units(n, grain) units
// of parallel_for_units.
template <typename Body>
void parallel_for(int64_t n, int64_t grain, const Body& body) {
  parallel_for_units(n, parallel_units(n, grain),
                     [&](int64_t, int64_t begin, int64_t end) { body(begin, end); });
}

}  // namespace kiln::cpu
