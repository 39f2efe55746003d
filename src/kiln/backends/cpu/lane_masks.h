// Internal: the lane masks of AVX-512 loops over rows that end inside a vector of 16 (the bf16
// block products: bf16_block_products.cpp, amx_block_products.cpp).
#pragma once

#include <cstdint>

namespace kiln::cpu {

// The mask (an __mmask16) of a vector's first `count` lanes: all 16 for 16 or more, none for 0
// or fewer.
inline uint16_t lanes_below(int64_t count) {
  return count >= 16  ? uint16_t{0xFFFF}
         : count <= 0 ? uint16_t{0}
                      : static_cast<uint16_t>((1u << count) - 1);
}

}  // namespace kiln::cpu
