// random_bits as StableHLO integer ops: the ten Philox-4x32-10 rounds of kiln/ir/philox.cpp over
// one ui32 [rows, blocks] array per counter word (one lane per block of four elements of a keyed
// row: the whole tensor for a scalar offset, each leading row for a vector of keys), so that every
// device draws the bits the host backends draw. The 32x32 -> 64-bit products are computed in ui64.
#include "kiln/backends/pjrt/stablehlo_lowering.h"

namespace kiln::pjrt {
namespace {

constexpr uint64_t kMultiplier0 = 0xD2511F53;
constexpr uint64_t kMultiplier1 = 0xCD9E8D57;
constexpr uint64_t kWeyl0 = 0x9E3779B9;
constexpr uint64_t kWeyl1 = 0xBB67AE85;

struct Words {
  Ssa lo, hi;
};

// The low and high 32-bit words of an i64 scalar or vector, elementwise.
Words split_i64(StableHloWriter& writer, const Ssa& value) {
  Ssa bits = writer.op("stablehlo.bitcast_convert", {value}, "ui64", value.shape);
  Ssa low_mask = writer.splat_bits("ui64", 0xFFFFFFFF, value.shape);
  Ssa low = writer.same_type("stablehlo.and", {bits, low_mask});
  Ssa high = writer.same_type("stablehlo.shift_right_logical",
                              {bits, writer.splat_bits("ui64", 32, value.shape)});
  return {writer.convert(low, "ui32"), writer.convert(high, "ui32")};
}

// The high and low words of a * multiplier, elementwise over a ui32 vector.
Words multiply_wide(StableHloWriter& writer, const Ssa& a, uint64_t multiplier) {
  Ssa wide = writer.convert(a, "ui64");
  Ssa product = writer.same_type("stablehlo.multiply",
                                 {wide, writer.splat_bits("ui64", multiplier, a.shape)});
  Ssa high = writer.same_type("stablehlo.shift_right_logical",
                              {product, writer.splat_bits("ui64", 32, a.shape)});
  Ssa low =
      writer.same_type("stablehlo.multiply", {a, writer.splat_bits("ui32", multiplier, a.shape)});
  return {low, writer.convert(high, "ui32")};
}

Ssa xor3(StableHloWriter& writer, const Ssa& a, const Ssa& b, const Ssa& c) {
  return writer.same_type("stablehlo.xor", {writer.same_type("stablehlo.xor", {a, b}), c});
}

}  // namespace

Ssa lower_random_bits(StableHloWriter& writer, const Ssa& seed, const Ssa& offset, uint32_t stream,
                      const Shape& shape) {
  const bool per_row = !offset.shape.empty();
  int64_t rows = per_row ? shape[0] : 1;
  int64_t length = rows > 0 ? shape_numel(shape) / rows : 0;
  int64_t blocks = (length + 3) / 4;
  Shape lanes = {rows, blocks};
  Words key_words = split_i64(writer, seed);
  Words offset_words = split_i64(writer, offset);
  std::vector<int64_t> offset_dims = per_row ? std::vector<int64_t>{0} : std::vector<int64_t>{};
  Ssa key0 = writer.broadcast(key_words.lo, lanes, {});
  Ssa key1 = writer.broadcast(key_words.hi, lanes, {});
  Ssa c0 = writer.op("stablehlo.iota", {}, "ui32", lanes, "iota_dimension = 1 : i64");
  Ssa c1 = writer.splat_bits("ui32", stream, lanes);
  Ssa c2 = writer.broadcast(offset_words.lo, lanes, offset_dims);
  Ssa c3 = writer.broadcast(offset_words.hi, lanes, offset_dims);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 = writer.same_type("stablehlo.add", {key0, writer.splat_bits("ui32", kWeyl0, lanes)});
      key1 = writer.same_type("stablehlo.add", {key1, writer.splat_bits("ui32", kWeyl1, lanes)});
    }
    Words product0 = multiply_wide(writer, c0, kMultiplier0);
    Words product1 = multiply_wide(writer, c2, kMultiplier1);
    Ssa next0 = xor3(writer, product1.hi, c1, key0);
    Ssa next2 = xor3(writer, product0.hi, c3, key1);
    c0 = next0;
    c1 = product1.lo;
    c2 = next2;
    c3 = product0.lo;
  }
  // Block b's words 0..3 are its row's elements 4b..4b+3: interleave as [rows, blocks, 4], flatten
  // each row, trim it to its length.
  Shape column = {rows, blocks, 1};
  Ssa words = writer.op("stablehlo.concatenate",
                        {writer.reshape(c0, column), writer.reshape(c1, column),
                         writer.reshape(c2, column), writer.reshape(c3, column)},
                        "ui32", {rows, blocks, 4}, "dimension = 2 : i64");
  Ssa flat = writer.reshape(words, {rows, blocks * 4});
  if (blocks * 4 != length) {
    flat = writer.op("stablehlo.slice", {flat}, "ui32", {rows, length},
                     "start_indices = array<i64: 0, 0>, limit_indices = " +
                         i64_array({rows, length}) + ", strides = array<i64: 1, 1>");
  }
  return writer.reshape(flat, shape);
}

}  // namespace kiln::pjrt
