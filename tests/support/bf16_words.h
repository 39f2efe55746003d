// Random bf16 numbers for the tests of the bf16 products, as their 16-bit words.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "kiln/ir/philox.h"

namespace kiln::testing {

// `count` bf16 numbers in [-2, 2) (f32 values truncated to bf16) from Philox stream `stream`.
inline std::vector<uint16_t> random_bf16_words(int64_t count, uint32_t stream) {
  std::vector<uint16_t> words(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    float x = static_cast<float>(random_bits_at(7, 0, stream, i) * 0x1p-30 - 2.0);
    words[static_cast<size_t>(i)] = static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16);
  }
  return words;
}

// The value of a bf16 word, exactly, as f32.
inline float bf16_word_value(uint16_t word) {
  return std::bit_cast<float>(static_cast<uint32_t>(word) << 16);
}

}  // namespace kiln::testing
