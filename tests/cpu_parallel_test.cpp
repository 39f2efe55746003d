// How the kernels' loops split their work (parallel.h): BalancedShares hands each thread its own
// share front to back, then the back of the fullest share; parallel_for_units runs every unit
// once, on whichever thread is free, with the same unit boundaries every run; parallel_units
// keeps small loops on one thread.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kiln/backends/cpu/parallel.h"

namespace kiln::cpu {
namespace {

TEST(BalancedShares, OwnShareFrontToBackThenTheFullestShareFromItsBack) {
  BalancedShares shares(10, 2);  // thread 0: units 0-4, thread 1: units 5-9
  EXPECT_EQ(shares.next(0), 0);
  EXPECT_EQ(shares.next(1), 5);
  EXPECT_EQ(shares.next(1), 6);
  for (int64_t unit = 1; unit < 5; ++unit) EXPECT_EQ(shares.next(0), unit);
  // Thread 0's share is done: it takes thread 1's last units, thread 1 its next ones.
  EXPECT_EQ(shares.next(0), 9);
  EXPECT_EQ(shares.next(1), 7);
  EXPECT_EQ(shares.next(0), 8);
  EXPECT_EQ(shares.next(1), -1);
  EXPECT_EQ(shares.next(0), -1);
}

TEST(BalancedShares, ThreadsWithoutAShareOnlySteal) {
  BalancedShares shares(4, 2);   // units 0-1 and 2-3
  EXPECT_EQ(shares.next(5), 1);  // the fullest share (the first of equals), from its back
  EXPECT_EQ(shares.next(5), 3);
  EXPECT_EQ(shares.next(0), 0);
  EXPECT_EQ(shares.next(1), 2);
  EXPECT_EQ(shares.next(5), -1);
}

TEST(ParallelUnits, SmallLoopsStayOnOneThreadAndUnitsHoldAGrainEach) {
  EXPECT_EQ(parallel_units(0, 10), 0);
  EXPECT_EQ(parallel_units(19, 10), 1);
  const int64_t threads = kernel_threads();
  for (int64_t n : {int64_t{20}, int64_t{1000}, int64_t{1} << 20}) {
    int64_t units = parallel_units(n, 10);
    EXPECT_LE(units, threads * kUnitsPerThread) << n;
    EXPECT_GE(n / units, 10) << n;
    EXPECT_EQ(units, threads == 1 ? 1 : std::min(threads * kUnitsPerThread, n / 10)) << n;
  }
}

// Every unit runs once over its fixed range, also when thread 0 stalls in its first unit until
// another thread has taken a unit of its share.
TEST(ParallelForUnits, EveryUnitOnceOverTheSameRangesWhileAStalledThreadsUnitsMove) {
  const int threads = std::min(kernel_threads(), BalancedShares::kMaxShares);
  const int64_t n = 1000, units = 4 * threads + 5;
  const int64_t share0_end = units / threads;  // thread 0's share: units [0, share0_end)
  std::vector<std::atomic<int>> runs(static_cast<size_t>(units));
  std::vector<int64_t> begins(static_cast<size_t>(units), -1), ends(static_cast<size_t>(units), -1);
  std::atomic<bool> taken_over{false};
  parallel_for_units(n, units, [&](int64_t unit, int64_t begin, int64_t end) {
    const int me = omp_get_thread_num();
    if (me != 0 && unit < share0_end) taken_over = true;
    if (me == 0 && unit == 0 && threads > 1) {
      auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!taken_over && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    runs[static_cast<size_t>(unit)]++;
    begins[static_cast<size_t>(unit)] = begin;
    ends[static_cast<size_t>(unit)] = end;
  });
  for (int64_t u = 0; u < units; ++u) {
    EXPECT_EQ(runs[static_cast<size_t>(u)].load(), 1) << u;
    EXPECT_EQ(begins[static_cast<size_t>(u)], n * u / units) << u;
    EXPECT_EQ(ends[static_cast<size_t>(u)], n * (u + 1) / units) << u;
  }
  EXPECT_EQ(taken_over.load(), threads > 1);
}

TEST(ParallelFor, CoversTheRangeOnceInDisjointRanges) {
  const int64_t n = 100'003;
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  parallel_for(n, 100, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
}

}  // namespace
}  // namespace kiln::cpu
