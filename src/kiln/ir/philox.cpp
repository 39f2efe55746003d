// Philox-4x32-10, the counter-based generator behind random_bits (see philox.h).
#include "kiln/ir/philox.h"

#include <cstddef>

namespace kiln {
namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9;
constexpr uint32_t kWeyl1 = 0xBB67AE85;

PhiloxCounter philox_round(const PhiloxCounter& c, const PhiloxKey& key) {
  uint64_t product0 = uint64_t{kMultiplier0} * c[0];
  uint64_t product1 = uint64_t{kMultiplier1} * c[2];
  auto hi = [](uint64_t p) { return static_cast<uint32_t>(p >> 32); };
  auto lo = [](uint64_t p) { return static_cast<uint32_t>(p); };
  return {hi(product1) ^ c[1] ^ key[0], lo(product1), hi(product0) ^ c[3] ^ key[1], lo(product0)};
}

}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    counter = philox_round(counter, key);
  }
  return counter;
}

PhiloxCounter random_block_at(int64_t seed, int64_t offset, uint32_t stream, uint64_t block) {
  auto useed = static_cast<uint64_t>(seed);
  auto uoffset = static_cast<uint64_t>(offset);
  // The block number is the first counter word; graphs never hold 2^34 elements.
  PhiloxCounter counter = {static_cast<uint32_t>(block), stream, static_cast<uint32_t>(uoffset),
                           static_cast<uint32_t>(uoffset >> 32)};
  PhiloxKey key = {static_cast<uint32_t>(useed), static_cast<uint32_t>(useed >> 32)};
  return philox4x32_10(counter, key);
}

uint32_t random_bits_at(int64_t seed, int64_t offset, uint32_t stream, int64_t index) {
  return random_block_at(seed, offset, stream, static_cast<uint64_t>(index) / 4)
      [static_cast<std::size_t>(index % 4)];
}

uint32_t random_bits_row_at(int64_t seed, std::span<const int64_t> offsets, uint32_t stream,
                            int64_t row_length, int64_t index) {
  return random_bits_at(seed, offsets[static_cast<std::size_t>(index / row_length)], stream,
                        index % row_length);
}

}  // namespace kiln
