// Internal: what Kiln's AMX code shares (amx_block_products.cpp, amx_transposed_products.cpp):
// whether this compiler builds it (KILN_AMX_PRODUCTS: GCC or clang on x86-64), the target
// attribute of its functions (KILN_AMX_TARGET), and a 16 x 16 transpose of 32-bit words in
// registers, which turns pairs of bf16 along an operand's rows into a tile's rows.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KILN_AMX_PRODUCTS 1
#include <immintrin.h>
#define KILN_AMX_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,amx-tile,amx-bf16")))
#else
#define KILN_AMX_PRODUCTS 0
#endif

#if KILN_AMX_PRODUCTS

namespace kiln::cpu {

// GCC 12 reports the unpack and shuffle intrinsics' own undefined pass-through vectors as
// maybe-uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// words[i] lane j <-> words[j] lane i, for 16 x 16 32-bit words: pairs of words within 128-bit
// lanes, then pairs of pairs (after which words[4g + c]'s lane L holds column 4L + c of rows 4g to
// 4g + 3), then a 4 x 4 transpose of the 128-bit lanes of words[c], [4 + c], [8 + c], [12 + c].
__attribute__((target("avx512f"))) inline void transpose_words(__m512i words[16]) {
  __m512i pairs[16];
  for (int i = 0; i < 16; i += 2) {
    pairs[i] = _mm512_unpacklo_epi32(words[i], words[i + 1]);
    pairs[i + 1] = _mm512_unpackhi_epi32(words[i], words[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    words[i] = _mm512_unpacklo_epi64(pairs[i], pairs[i + 2]);
    words[i + 1] = _mm512_unpackhi_epi64(pairs[i], pairs[i + 2]);
    words[i + 2] = _mm512_unpacklo_epi64(pairs[i + 1], pairs[i + 3]);
    words[i + 3] = _mm512_unpackhi_epi64(pairs[i + 1], pairs[i + 3]);
  }
  __m512i columns[16];
  for (int c = 0; c < 4; ++c) {
    __m512i ab02 = _mm512_shuffle_i32x4(words[c], words[4 + c], 0x88);
    __m512i ab13 = _mm512_shuffle_i32x4(words[c], words[4 + c], 0xDD);
    __m512i cd02 = _mm512_shuffle_i32x4(words[8 + c], words[12 + c], 0x88);
    __m512i cd13 = _mm512_shuffle_i32x4(words[8 + c], words[12 + c], 0xDD);
    columns[c] = _mm512_shuffle_i32x4(ab02, cd02, 0x88);
    columns[4 + c] = _mm512_shuffle_i32x4(ab13, cd13, 0x88);
    columns[8 + c] = _mm512_shuffle_i32x4(ab02, cd02, 0xDD);
    columns[12 + c] = _mm512_shuffle_i32x4(ab13, cd13, 0xDD);
  }
  for (int i = 0; i < 16; ++i) words[i] = columns[i];
}
#pragma GCC diagnostic pop

}  // namespace kiln::cpu

#endif
