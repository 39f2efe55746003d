// return_free_heap_pages: memory freed below the heap's top leaves the resident set (what keeps
// the freed initial weights out of a run's peak RSS, kiln bench and Trainer).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "kiln/runtime/heap_pages.h"

namespace kiln {
namespace {

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(HeapPages, FreedMemoryBelowTheHeapTopLeavesTheResidentSet) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan's allocator stands in for glibc's heap";
#elif !defined(__GLIBC__)
  GTEST_SKIP() << "glibc's heap only";
#else
  // 64 MiB in blocks below malloc's mmap threshold (so on the heap), then one block above them
  // that stays in use, so that freeing them cannot shrink the heap from its top.
  constexpr size_t kBlock = size_t{64} << 10, kBlocks = 1024;
  std::vector<char*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(static_cast<char*>(std::malloc(kBlock)));
    std::memset(blocks.back(), 1, kBlock);
  }
  auto* top = static_cast<char*>(std::malloc(kBlock));
  std::memset(top, 1, kBlock);
  for (char* block : blocks) std::free(block);
  const int64_t before = resident_bytes();
  return_free_heap_pages();
  const int64_t after = resident_bytes();
  std::free(top);
  EXPECT_GT(before - after, static_cast<int64_t>(kBlock * kBlocks / 2))
      << "resident " << before << " -> " << after << " bytes";
#endif
}

}  // namespace
}  // namespace kiln
