// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): the
// definition of the random_bits op, shared by every backend that runs on the host.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace kiln {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// The four words of Philox block `block` of a random_bits op (seed, offset, stream): the bits of
// its elements 4 block ... 4 block + 3 (random_bits_at), for callers that take them all.
PhiloxCounter random_block_at(int64_t seed, int64_t offset, uint32_t stream, uint64_t block);

// Bits of element `index` of a random_bits op: key = (seed lo, seed hi),
// counter = (index / 4, stream, offset lo, offset hi), word index % 4. The block number is one
// 32-bit word, so a single op draws at most 2^34 distinct elements (builders stay far below).
uint32_t random_bits_at(int64_t seed, int64_t offset, uint32_t stream, int64_t index);

// Bits of element `index` of a random_bits op keyed per leading row (offset an i64 vector, one
// key per row of `row_length` elements): element (r, i), r = index / row_length, takes
// random_bits_at(seed, offsets[r], stream, i). A row's bits depend on its own key only, so a
// replica holding some rows of a batch draws what those rows draw in the whole batch.
uint32_t random_bits_row_at(int64_t seed, std::span<const int64_t> offsets, uint32_t stream,
                            int64_t row_length, int64_t index);

}  // namespace kiln
