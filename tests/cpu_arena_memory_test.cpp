// allocate_arena: a block of a huge page (2 MiB) or more starts on one and has its whole huge
// pages advised for transparent huge pages (the mapping's "hg" flag in /proc/self/smaps), its
// tail not (the resident set grows by nothing); smaller blocks are 64-byte aligned.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "kiln/backends/cpu/arena_memory.h"

namespace kiln::cpu {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// The VmFlags of the mapping holding `address`.
std::string vm_flags_at(const void* address) {
  auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') inside = begin <= at && at < end;
    if (inside && line.starts_with("VmFlags:")) return line;
  }
  return "";
}

bool advised(const void* address) {
  return (" " + vm_flags_at(address) + " ").find(" hg ") != std::string::npos;
}

TEST(CpuArenaMemory, WholeHugePagesOfLargeBlocksAreAdvised) {
  ArenaBytes block = allocate_arena(3 * kHugePage + 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block.get()) % kHugePage, 0u);
  EXPECT_TRUE(advised(block.get())) << vm_flags_at(block.get());
  EXPECT_TRUE(advised(block.get() + 3 * kHugePage - 1));
  EXPECT_FALSE(advised(block.get() + 3 * kHugePage)) << "the tail past the last huge page";
}

TEST(CpuArenaMemory, SmallBlocksAre64ByteAligned) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, kHugePage - 1}) {
    ArenaBytes block = allocate_arena(bytes);
    ASSERT_NE(block.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.get()) % 64, 0u) << bytes;
  }
}

}  // namespace
}  // namespace kiln::cpu
