// The Philox blocks of random bits, which the loop kernels' random_bits and dropout use (iota runs
// in loop kernels too; inputs and constants need no kernel: their buffers are the arguments and
// the graph's constants).
#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KILN_PHILOX_VECTORS 1
#endif

#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/backends/cpu/kernel.h"

namespace kiln::cpu {
namespace {

// What every block of a call shares: the key, and the counter's words but the first (block j's
// first word is first + j).
struct PhiloxKey {
  uint32_t key0, key1, stream, offset_lo, offset_hi;
};

// Philox-4x32-10 exactly as kiln/ir/philox.cpp defines it, inline and over many blocks at once, so
// that the 32x32->64-bit multiplies vectorise (the tests compare every bit with the reference).
// Always inlined into its variants below, one per instruction set.
[[gnu::always_inline]] inline void philox_range(const PhiloxKey& key, int64_t first,
                                                int64_t blocks, uint32_t* words) {
  for (int64_t j = 0; j < blocks; ++j) {
    uint32_t c0 = static_cast<uint32_t>(first + j), c1 = key.stream, c2 = key.offset_lo;
    uint32_t c3 = key.offset_hi, k0 = key.key0, k1 = key.key1;
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

void philox_range_baseline(const PhiloxKey& key, int64_t first, int64_t blocks, uint32_t* words) {
  philox_range(key, first, blocks, words);
}
#if KILN_ISA_VARIANTS
__attribute__((target("arch=x86-64-v3"))) void philox_range_avx2(const PhiloxKey& key,
                                                                  int64_t first, int64_t blocks,
                                                                  uint32_t* words) {
  philox_range(key, first, blocks, words);
}
__attribute__((target("arch=x86-64-v4"))) void philox_range_avx512(const PhiloxKey& key,
                                                                    int64_t first, int64_t blocks,
                                                                    uint32_t* words) {
  philox_range(key, first, blocks, words);
}
#endif

// philox_range compiled for the kernels' instruction set.
void philox_range_for_isa(const PhiloxKey& key, int64_t first, int64_t blocks, uint32_t* words) {
#if KILN_ISA_VARIANTS
  switch (loop_kernel_isa()) {
    case CpuIsa::avx512_core: return philox_range_avx512(key, first, blocks, words);
    case CpuIsa::avx2: return philox_range_avx2(key, first, blocks, words);
    default: break;
  }
#endif
  philox_range_baseline(key, first, blocks, words);
}

#ifdef KILN_PHILOX_VECTORS
// The same blocks with AVX-512 written out: 16 blocks per vector, two vectors in flight (one
// round's multiplies wait on the last's), 32-bit high and low halves of the products from the
// even and odd lanes' 64-bit products. GCC's vectorisation of philox_range widens every lane to
// 64 bits; this takes 0.45 ns per word against its 1.06 (one core of the AVX-512 Xeon). Returns
// the blocks done (a multiple of 32); philox_range_for_isa does the rest.
#define KILN_AVX512 __attribute__((target("avx512f")))
// GCC 12 reports the intrinsics' own undefined pass-through vectors as maybe-uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

KILN_AVX512 inline __m512i splat(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }

// The halves move by shuffles of 32-bit lanes, merged under a mask into the other product: one
// instruction each where a shift and a blend took two (0.53-0.60 ns per word).
constexpr auto kOddToEven = static_cast<_MM_PERM_ENUM>(0xF5);  // lanes (1, 1, 3, 3)
constexpr auto kEvenToOdd = static_cast<_MM_PERM_ENUM>(0xA0);  // lanes (0, 0, 2, 2)

KILN_AVX512 inline void multiply_halves(__m512i a, __m512i m, __m512i& high, __m512i& low) {
  __m512i even = _mm512_mul_epu32(a, m);
  __m512i odd = _mm512_mul_epu32(_mm512_shuffle_epi32(a, kOddToEven), m);
  high = _mm512_mask_shuffle_epi32(odd, 0x5555, even, kOddToEven);
  low = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, kEvenToOdd);
}

// Blocks j..j+15's words c0[j], c1[j], c2[j], c3[j] to out in block order: 32-bit then 64-bit
// interleaves give each 128-bit lane one block's four words, then a 4x4 transpose of the lanes.
KILN_AVX512 inline void store_blocks(__m512i c0, __m512i c1, __m512i c2, __m512i c3,
                                     uint32_t* out) {
  __m512i low01 = _mm512_unpacklo_epi32(c0, c1), high01 = _mm512_unpackhi_epi32(c0, c1);
  __m512i low23 = _mm512_unpacklo_epi32(c2, c3), high23 = _mm512_unpackhi_epi32(c2, c3);
  __m512i a = _mm512_unpacklo_epi64(low01, low23), b = _mm512_unpackhi_epi64(low01, low23);
  __m512i c = _mm512_unpacklo_epi64(high01, high23), d = _mm512_unpackhi_epi64(high01, high23);
  __m512i ab_low = _mm512_shuffle_i32x4(a, b, 0x44), cd_low = _mm512_shuffle_i32x4(c, d, 0x44);
  __m512i ab_high = _mm512_shuffle_i32x4(a, b, 0xEE), cd_high = _mm512_shuffle_i32x4(c, d, 0xEE);
  _mm512_storeu_si512(out, _mm512_shuffle_i32x4(ab_low, cd_low, 0x88));
  _mm512_storeu_si512(out + 16, _mm512_shuffle_i32x4(ab_low, cd_low, 0xDD));
  _mm512_storeu_si512(out + 32, _mm512_shuffle_i32x4(ab_high, cd_high, 0x88));
  _mm512_storeu_si512(out + 48, _mm512_shuffle_i32x4(ab_high, cd_high, 0xDD));
}

KILN_AVX512 int64_t philox_zmm_blocks(const PhiloxKey& key, int64_t first, int64_t blocks,
                                      uint32_t* words) {
  constexpr int kVectors = 2;
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i m0 = splat(0xD2511F53), m1 = splat(0xCD9E8D57);
  int64_t j = 0;
  for (; j + 16 * kVectors <= blocks; j += 16 * kVectors) {
    __m512i c0[kVectors], c1[kVectors], c2[kVectors], c3[kVectors];
    for (int v = 0; v < kVectors; ++v) {
      c0[v] = _mm512_add_epi32(splat(static_cast<uint32_t>(first + j + 16 * v)), lanes);
      c1[v] = splat(key.stream);
      c2[v] = splat(key.offset_lo);
      c3[v] = splat(key.offset_hi);
    }
    uint32_t k0 = key.key0, k1 = key.key1;
    for (int round = 0; round < 10; ++round) {
      __m512i key0s = splat(k0), key1s = splat(k1);
      for (int v = 0; v < kVectors; ++v) {
        __m512i high0, low0, high1, low1;
        multiply_halves(c0[v], m0, high0, low0);
        multiply_halves(c2[v], m1, high1, low1);
        c0[v] = _mm512_ternarylogic_epi32(high1, c1[v], key0s, 0x96);  // three-way xor
        c2[v] = _mm512_ternarylogic_epi32(high0, c3[v], key1s, 0x96);
        c1[v] = low1;
        c3[v] = low0;
      }
      k0 += 0x9E3779B9;
      k1 += 0xBB67AE85;
    }
    for (int v = 0; v < kVectors; ++v) {
      store_blocks(c0[v], c1[v], c2[v], c3[v], words + 4 * (j + 16 * v));
    }
  }
  return j;
}

// The same with AVX2 (Zen 3's level): 8 blocks per vector, two vectors in flight; 0.66 ns per word
// on one core of this machine against 1.60 for GCC's vectorisation of philox_range with AVX2.
// BERT-tiny fp32 under the avx2 cap: 55.1/58.9/55.2 -> 53.5/53.2/53.2 ms a step.
#define KILN_AVX2 __attribute__((target("avx2")))

KILN_AVX2 inline __m256i splat8(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }

KILN_AVX2 inline void multiply_halves(__m256i a, __m256i m, __m256i& high, __m256i& low) {
  __m256i even = _mm256_mul_epu32(a, m);
  __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  high = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  low = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// Blocks j..j+7's words to out in block order: the interleaves give each 128-bit lane of a, b, c,
// d one block's four words (blocks 0-3 in the low lanes, 4-7 in the high), then lanes pair up.
KILN_AVX2 inline void store_blocks(__m256i c0, __m256i c1, __m256i c2, __m256i c3,
                                   uint32_t* out) {
  __m256i low01 = _mm256_unpacklo_epi32(c0, c1), high01 = _mm256_unpackhi_epi32(c0, c1);
  __m256i low23 = _mm256_unpacklo_epi32(c2, c3), high23 = _mm256_unpackhi_epi32(c2, c3);
  __m256i a = _mm256_unpacklo_epi64(low01, low23), b = _mm256_unpackhi_epi64(low01, low23);
  __m256i c = _mm256_unpacklo_epi64(high01, high23), d = _mm256_unpackhi_epi64(high01, high23);
  auto* at = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(at, _mm256_permute2x128_si256(a, b, 0x20));
  _mm256_storeu_si256(at + 1, _mm256_permute2x128_si256(c, d, 0x20));
  _mm256_storeu_si256(at + 2, _mm256_permute2x128_si256(a, b, 0x31));
  _mm256_storeu_si256(at + 3, _mm256_permute2x128_si256(c, d, 0x31));
}

KILN_AVX2 int64_t philox_ymm_blocks(const PhiloxKey& key, int64_t first, int64_t blocks,
                                    uint32_t* words) {
  constexpr int kVectors = 2;
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i m0 = splat8(0xD2511F53), m1 = splat8(0xCD9E8D57);
  int64_t j = 0;
  for (; j + 8 * kVectors <= blocks; j += 8 * kVectors) {
    __m256i c0[kVectors], c1[kVectors], c2[kVectors], c3[kVectors];
    for (int v = 0; v < kVectors; ++v) {
      c0[v] = _mm256_add_epi32(splat8(static_cast<uint32_t>(first + j + 8 * v)), lanes);
      c1[v] = splat8(key.stream);
      c2[v] = splat8(key.offset_lo);
      c3[v] = splat8(key.offset_hi);
    }
    uint32_t k0 = key.key0, k1 = key.key1;
    for (int round = 0; round < 10; ++round) {
      __m256i key0s = splat8(k0), key1s = splat8(k1);
      for (int v = 0; v < kVectors; ++v) {
        __m256i high0, low0, high1, low1;
        multiply_halves(c0[v], m0, high0, low0);
        multiply_halves(c2[v], m1, high1, low1);
        c0[v] = _mm256_xor_si256(_mm256_xor_si256(high1, c1[v]), key0s);
        c2[v] = _mm256_xor_si256(_mm256_xor_si256(high0, c3[v]), key1s);
        c1[v] = low1;
        c3[v] = low0;
      }
      k0 += 0x9E3779B9;
      k1 += 0xBB67AE85;
    }
    for (int v = 0; v < kVectors; ++v) {
      store_blocks(c0[v], c1[v], c2[v], c3[v], words + 4 * (j + 8 * v));
    }
  }
  return j;
}
#pragma GCC diagnostic pop
#endif

}  // namespace

void philox_blocks(int64_t seed, int64_t offset, uint32_t stream, int64_t first, int64_t blocks,
                   uint32_t* words) {
  auto useed = static_cast<uint64_t>(seed);
  auto uoffset = static_cast<uint64_t>(offset);
  const PhiloxKey key{static_cast<uint32_t>(useed), static_cast<uint32_t>(useed >> 32), stream,
                      static_cast<uint32_t>(uoffset), static_cast<uint32_t>(uoffset >> 32)};
  int64_t done = 0;
#ifdef KILN_PHILOX_VECTORS
  CpuIsa isa = effective_cpu_isa();
  if (isa >= CpuIsa::avx512_core) {
    done = philox_zmm_blocks(key, first, blocks, words);
  } else if (isa >= CpuIsa::avx2) {
    done = philox_ymm_blocks(key, first, blocks, words);
  }
#endif
  philox_range_for_isa(key, first + done, blocks - done, words + 4 * done);
}

}  // namespace kiln::cpu
