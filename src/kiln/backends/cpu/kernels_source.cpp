// The Philox blocks of random bits, which the loop kernels' random_bits and dropout use (iota runs
// in loop kernels too; inputs and constants need no kernel: their buffers are the arguments and
// the graph's constants).
#include <algorithm>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"

namespace kiln::cpu {
namespace {

// Philox-4x32-10 exactly as kiln/ir/philox.cpp defines it, inline and over many blocks at once, so
// that the 32x32->64-bit multiplies vectorise (the tests compare every bit with the reference).
KILN_CPU_CLONES void philox_range(uint32_t key0, uint32_t key1, uint32_t stream,
                                  uint32_t offset_lo, uint32_t offset_hi, int64_t first,
                                  int64_t blocks, uint32_t* words) {
  for (int64_t j = 0; j < blocks; ++j) {
    uint32_t c0 = static_cast<uint32_t>(first + j), c1 = stream, c2 = offset_lo, c3 = offset_hi;
    uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < 10; ++round) {
      uint64_t product0 = uint64_t{0xD2511F53} * c0;
      uint64_t product1 = uint64_t{0xCD9E8D57} * c2;
      uint32_t next0 = static_cast<uint32_t>(product1 >> 32) ^ c1 ^ k0;
      uint32_t next2 = static_cast<uint32_t>(product0 >> 32) ^ c3 ^ k1;
      c1 = static_cast<uint32_t>(product1);
      c3 = static_cast<uint32_t>(product0);
      c0 = next0;
      c2 = next2;
      k0 += 0x9E3779B9;
      k1 += 0xBB67AE85;
    }
    words[4 * j] = c0;
    words[4 * j + 1] = c1;
    words[4 * j + 2] = c2;
    words[4 * j + 3] = c3;
  }
}

}  // namespace

void philox_blocks(int64_t seed, int64_t offset, uint32_t stream, int64_t first, int64_t blocks,
                   uint32_t* words) {
  auto useed = static_cast<uint64_t>(seed);
  auto uoffset = static_cast<uint64_t>(offset);
  philox_range(static_cast<uint32_t>(useed), static_cast<uint32_t>(useed >> 32), stream,
               static_cast<uint32_t>(uoffset), static_cast<uint32_t>(uoffset >> 32), first, blocks,
               words);
}

}  // namespace kiln::cpu
