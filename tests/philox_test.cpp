// Philox-4x32-10 against the Random123 known-answer vectors, and the random_bits element mapping.
#include <gtest/gtest.h>

#include "kiln/ir/philox.h"

namespace kiln {
namespace {

// Random123's kat_vectors for philox4x32_10: counter 0 / key 0, all ones, and digits of pi.
TEST(Philox, KnownAnswerZero) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(Philox, KnownAnswerAllOnes) {
  EXPECT_EQ(
      philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Philox, KnownAnswerPi) {
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(RandomBitsAt, ZeroKeyIsTheFirstKnownAnswer) {
  PhiloxCounter expected{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(random_bits_at(0, 0, 0, i), expected[static_cast<size_t>(i)]);
  }
}

// seed -1 and offset -1 are all-ones words; block 2^32-1 and stream 2^32-1 fill the counter.
TEST(RandomBitsAt, AllOnesMapsEveryCounterAndKeyWord) {
  PhiloxCounter expected{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
  int64_t last_block = int64_t{0xffffffff} * 4;
  for (int64_t w = 0; w < 4; ++w) {
    EXPECT_EQ(random_bits_at(-1, -1, 0xffffffff, last_block + w), expected[static_cast<size_t>(w)]);
  }
}

TEST(RandomBitsAt, ElementTakesWordIndexMod4OfBlockIndexDiv4) {
  int64_t seed = 0x0123456789abcdefLL;
  int64_t offset = 0x0000000500000007LL;
  uint32_t stream = 3;
  for (int64_t index : {0, 1, 2, 3, 4, 5, 11, 1001}) {
    PhiloxCounter block =
        philox4x32_10({static_cast<uint32_t>(index / 4), stream, 0x00000007u, 0x00000005u},
                      {0x89abcdefu, 0x01234567u});
    EXPECT_EQ(random_bits_at(seed, offset, stream, index), block[static_cast<size_t>(index % 4)])
        << "index " << index;
  }
  // Elements 0..3 are different words of one block; element 4 starts the next block.
  EXPECT_NE(random_bits_at(seed, offset, stream, 0), random_bits_at(seed, offset, stream, 1));
  EXPECT_NE(random_bits_at(seed, offset, stream, 0), random_bits_at(seed, offset, stream, 4));
}

TEST(RandomBitsAt, StreamOffsetAndSeedChangeTheBits) {
  int64_t seed = 1234;
  int64_t offset = 7;
  uint32_t base = random_bits_at(seed, offset, 0, 9);
  EXPECT_EQ(random_bits_at(seed, offset, 0, 9), base);  // a function, not a state
  EXPECT_NE(random_bits_at(seed, offset, 1, 9), base);
  EXPECT_NE(random_bits_at(seed, offset + 1, 0, 9), base);
  EXPECT_NE(random_bits_at(seed, offset + (int64_t{1} << 32), 0, 9), base);  // offset hi word
  EXPECT_NE(random_bits_at(seed + 1, offset, 0, 9), base);
  EXPECT_NE(random_bits_at(seed + (int64_t{1} << 32), offset, 0, 9), base);  // seed hi word
}

// Element (r, i) of a row-keyed draw is element i of a draw keyed by the row's offset alone: its
// block counter restarts at each row (rows of 6 here, so row 1 starts mid-block of the flat index).
TEST(RandomBitsRowAt, EachRowIsADrawOfItsOwnKey) {
  const int64_t offsets[] = {5, -1, int64_t{1} << 40};
  for (int64_t index = 0; index < 18; ++index) {
    EXPECT_EQ(random_bits_row_at(99, offsets, 2, 6, index),
              random_bits_at(99, offsets[index / 6], 2, index % 6))
        << "element " << index;
  }
  EXPECT_NE(random_bits_row_at(99, offsets, 2, 6, 6), random_bits_at(99, 5, 2, 6));
}

}  // namespace
}  // namespace kiln
