// The CPU backend's Philox blocks (vectorised, AVX-512 where the CPU has it) against the
// definition every backend shares (random_bits_at), word for word: counts around the 32-block
// stride of the vector path and its scalar tail, counters that wrap 32 bits, keys and offsets
// with high bits set.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/ir/philox.h"

namespace kiln {
namespace {

TEST(CpuPhilox, BlocksMatchTheDefinitionWordForWord) {
  const int64_t seeds[] = {0, 42, -1, int64_t{0x7EADBEEF12345678}};
  const int64_t offsets[] = {0, 3, int64_t{1} << 40, -7};
  const int64_t firsts[] = {0, 1, 31, (int64_t{1} << 32) - 20, 123456789012};
  const int64_t counts[] = {0, 1, 15, 31, 32, 33, 64, 129};
  std::vector<uint32_t> words(4 * 129);
  int64_t compared = 0;
  for (int64_t seed : seeds) {
    for (int64_t offset : offsets) {
      for (int64_t first : firsts) {
        for (int64_t count : counts) {
          uint32_t stream = static_cast<uint32_t>(first % 7);
          cpu::philox_blocks(seed, offset, stream, first, count, words.data());
          for (int64_t w = 0; w < 4 * count; ++w) {
            ASSERT_EQ(words[static_cast<size_t>(w)],
                      random_bits_at(seed, offset, stream, 4 * first + w))
                << "seed " << seed << " offset " << offset << " first block " << first
                << " word " << w << " of " << 4 * count;
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, 4 * 4 * 5 * 4 * (0 + 1 + 15 + 31 + 32 + 33 + 64 + 129));
}

}  // namespace
}  // namespace kiln
