// The CPU backend's Philox blocks (vectorised: AVX-512 or AVX2, as the CPU and KILN_MAX_CPU_ISA
// allow) against the definition every backend shares (random_bits_at), word for word: counts
// around the vector paths' strides (16 blocks with AVX2, 32 with AVX-512) and their scalar tails,
// counters that wrap 32 bits, keys and offsets with high bits set. Then random bits keyed per
// leading row through the loop kernels against random_bits_row_at and the reference, rows of
// every length modulo 4.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/philox.h"

namespace kiln {
namespace {

TEST(CpuPhilox, BlocksMatchTheDefinitionWordForWord) {
  const int64_t seeds[] = {0, 42, -1, int64_t{0x7EADBEEF12345678}};
  const int64_t offsets[] = {0, 3, int64_t{1} << 40, -7};
  const int64_t firsts[] = {0, 1, 31, (int64_t{1} << 32) - 20, 123456789012};
  const int64_t counts[] = {0, 1, 15, 16, 17, 31, 32, 33, 64, 129};
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
  EXPECT_EQ(compared, 4 * 4 * 5 * 4 * (0 + 1 + 15 + 16 + 17 + 31 + 32 + 33 + 64 + 129));
}

// Row lengths around multiples of 4 and the loop kernels' 256-element blocks; rows of a multiple
// of 4 take the path that draws in place, the others the one that copies. Bits also pass through
// trailing sums over 9 elements, whose blocks (252 elements) start inside Philox blocks. The
// scalar form runs alongside.
TEST(CpuPhilox, RowKeyedBitsMatchTheDefinition) {
  const int64_t seed = int64_t{0x7EADBEEF12345678};
  auto backend = make_cpu_backend();
  for (int64_t length : {1, 2, 3, 4, 5, 8, 9, 13, 64, 255, 256, 257, 1031, 1032}) {
    constexpr int64_t kRows = 5;
    Tensor keys(DType::i64, {kRows});
    auto* key = keys.data_as<int64_t>();
    for (int64_t r = 0; r < kRows; ++r) key[r] = r % 2 == 0 ? -r * 1000003 : (r << 40) + 7;
    Graph graph;
    Value seed_in = graph.input("seed", DType::i64, {});
    Value keys_in = graph.input("keys", DType::i64, {kRows});
    Value one_key = graph.input("key", DType::i64, {});
    Value per_row = random_bits(seed_in, keys_in, {kRows, length}, 3);
    Value whole = random_bits(seed_in, one_key, {kRows, length}, 3);
    Value sums = reduce_sum(cast(random_bits(seed_in, keys_in, {kRows, length, 9}, 1), DType::i64),
                            {2});
    std::vector<Value> outputs = {per_row, whole, sums};
    Tensor seed_arg(DType::i64, {});
    seed_arg.data_as<int64_t>()[0] = seed;  // beyond 2^53: not through a double
    std::vector<Tensor> arguments = {seed_arg, keys, Tensor::scalar(DType::i64, -7)};
    std::vector<Tensor> actual = backend->compile(graph, outputs)->run(arguments);
    std::vector<Tensor> expected = evaluate_reference(graph, outputs, arguments);
    SCOPED_TRACE("row length " + std::to_string(length));
    const auto* bits = actual[0].data_as<uint32_t>();
    for (int64_t i = 0; i < kRows * length; ++i) {
      ASSERT_EQ(bits[i], random_bits_row_at(seed, {key, kRows}, 3, length, i)) << "element " << i;
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      EXPECT_EQ(actual[k].to_doubles(), expected[k].to_doubles()) << "output " << k;
    }
  }
}

}  // namespace
}  // namespace kiln
