// Builders of the source, elementwise, compare, layout and reduce families: inferred shapes and
// dtypes, the broadcast nodes binary builders insert, the exact error messages, and that the VJP
// rules return cotangents shaped like the operands.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kiln/ir/error.h"
#include "kiln/ir/op_registry.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

// The message of the kiln::Error that `build` throws.
std::string error_of(const std::function<void()>& build) {
  try {
    build();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

void expect_type(Value x, DType dtype, const Shape& shape) {
  EXPECT_EQ(dtype_name(x.dtype()), dtype_name(dtype));
  EXPECT_EQ(shape_str(x.shape()), shape_str(shape));
}

using Unary = Value (*)(Value);
using Binary = Value (*)(Value, Value);
const std::vector<Unary> kFloatUnary = {neg, abs, sign, exp, log, tanh, logistic, sqrt, rsqrt, erf};

Value operand(Value x, size_t i) { return x.graph().value(x.node().inputs.at(i)); }

// ---- sources ----

TEST(IrBuilders, ConstantCopiesTheTensor) {
  Graph g;
  Tensor t = Tensor::from_doubles(DType::f32, {2, 2}, {1, 2, 3, 4});
  Value c = constant(g, t);
  t.set(0, 9.0);
  expect_type(c, DType::f32, {2, 2});
  EXPECT_EQ(c.op(), OpKind::constant);
  EXPECT_EQ(c.node().attr<ConstantAttrs>().value.get(0), 1.0);
  EXPECT_EQ(error_of([&] { constant(g, Tensor()); }), "[constant] tensor f32() has no data");
}

TEST(IrBuilders, FullAndLikes) {
  Graph g;
  Value x = g.input("x", DType::i32, {2, 3});
  Value f = full(g, 2.5, DType::f64, {4, 3});
  expect_type(f, DType::f64, {4, 3});
  EXPECT_EQ(f.op(), OpKind::broadcast);
  EXPECT_EQ(operand(f, 0).node().attr<ConstantAttrs>().value.get(0), 2.5);
  Value scalar_full = full(g, 1.0, DType::f32, {});
  EXPECT_EQ(scalar_full.op(), OpKind::constant);

  Value z = zeros_like(x);
  expect_type(z, DType::i32, {2, 3});
  EXPECT_EQ(operand(z, 0).node().attr<ConstantAttrs>().value.get(0), 0.0);
  Value o = ones_like(x);
  EXPECT_EQ(operand(o, 0).node().attr<ConstantAttrs>().value.get(0), 1.0);
  Value s = scalar_like(x, 7.0);
  expect_type(s, DType::i32, {});
  EXPECT_EQ(s.node().attr<ConstantAttrs>().value.get(0), 7.0);

  EXPECT_EQ(error_of([&] { full(g, 0.0, DType::f32, {2, -1}); }), "[full] negative dim in (2,-1)");
  EXPECT_EQ(error_of([&] { zeros_like(Value()); }), "[zeros_like] operand is an empty Value");
}

TEST(IrBuilders, Iota) {
  Graph g;
  Value i = iota(g, DType::i64, {3, 5}, -1);
  expect_type(i, DType::i64, {3, 5});
  EXPECT_EQ(i.node().attr<IotaAttrs>().dim, 1);
  EXPECT_EQ(error_of([&] { iota(g, DType::f32, {3}, 1); }),
            "[iota] axis 1 out of range for rank 1");
  EXPECT_EQ(error_of([&] { iota(g, DType::boolean, {3}, 0); }),
            "[iota] needs a numeric dtype, got bool");
}

TEST(IrBuilders, RandomBits) {
  Graph g;
  Value seed = g.input("seed", DType::i64, {});
  Value offset = g.input("offset", DType::i64, {});
  Value bits = random_bits(seed, offset, {4, 6}, 3);
  expect_type(bits, DType::u32, {4, 6});
  EXPECT_EQ(bits.node().attr<RandomBitsAttrs>().stream, 3u);
  Value bad_seed = g.input("s32", DType::i32, {});
  Value bad_offset = g.input("o2", DType::i64, {2});
  EXPECT_EQ(error_of([&] { random_bits(bad_seed, offset, {4}, 0); }),
            "[random_bits] seed must be an i64 scalar, got i32()");
  EXPECT_EQ(error_of([&] { random_bits(seed, bad_offset, {4}, 0); }),
            "[random_bits] offset must be an i64 scalar or an i64 vector of one key per leading "
            "row (4 for (4)), got i64(2)");
  // One key per leading row.
  Value row_keys = g.input("keys", DType::i64, {4});
  expect_type(random_bits(seed, row_keys, {4, 6}, 1), DType::u32, {4, 6});
  expect_type(random_bits(seed, row_keys, {4}, 1), DType::u32, {4});
  EXPECT_EQ(error_of([&] { random_bits(seed, row_keys, {}, 0); }),
            "[random_bits] offset must be an i64 scalar for a scalar result, got i64(4)");
  Value i32_keys = g.input("keys32", DType::i32, {4});
  EXPECT_EQ(error_of([&] { random_bits(seed, i32_keys, {4, 6}, 0); }),
            "[random_bits] offset must be an i64 scalar or an i64 vector of one key per leading "
            "row (4 for (4,6)), got i32(4)");
  Value matrix_keys = g.input("keys2d", DType::i64, {4, 1});
  EXPECT_EQ(error_of([&] { random_bits(seed, matrix_keys, {4, 6}, 0); }),
            "[random_bits] offset must be an i64 scalar or an i64 vector of one key per leading "
            "row (4 for (4,6)), got i64(4,1)");
}

// ---- elementwise ----

TEST(IrBuilders, UnaryKeepsTypeAndChecksDtype) {
  Graph g;
  Value x = g.input("x", DType::bf16, {2, 3});
  Value n = g.input("n", DType::i32, {5});
  Value b = g.input("b", DType::boolean, {5});
  for (Unary fn : kFloatUnary) {
    expect_type(fn(x), DType::bf16, {2, 3});
  }
  for (Unary fn : {Unary{neg}, Unary{abs}, Unary{sign}}) expect_type(fn(n), DType::i32, {5});
  expect_type(logical_not(b), DType::boolean, {5});
  EXPECT_EQ(exp(x).op(), OpKind::exp);
  EXPECT_EQ(error_of([&] { exp(n); }), "[exp] needs a floating dtype, got i32");
  EXPECT_EQ(error_of([&] { rsqrt(b); }), "[rsqrt] needs a floating dtype, got bool");
  EXPECT_EQ(error_of([&] { neg(b); }), "[neg] needs a numeric dtype, got bool");
  EXPECT_EQ(error_of([&] { logical_not(x); }), "[logical_not] needs bool, got bf16");
  EXPECT_EQ(error_of([&] { tanh(Value()); }), "[tanh] operand is an empty Value");
}

TEST(IrBuilders, BinaryOfEqualShapesAddsNoBroadcast) {
  Graph g;
  Value a = g.input("a", DType::f32, {4, 3});
  Value b = g.input("b", DType::f32, {4, 3});
  Value c = a * b;
  expect_type(c, DType::f32, {4, 3});
  EXPECT_EQ(c.op(), OpKind::mul);
  EXPECT_TRUE(operand(c, 0).is(a));
  EXPECT_TRUE(operand(c, 1).is(b));
  EXPECT_EQ(g.size(), 3);
}

TEST(IrBuilders, BinaryInsertsBroadcastNodes) {
  Graph g;
  Value a = g.input("a", DType::f32, {4, 3});
  Value row = g.input("row", DType::f32, {3});
  Value sum = add(a, row);
  expect_type(sum, DType::f32, {4, 3});
  EXPECT_TRUE(operand(sum, 0).is(a));
  Value stretched = operand(sum, 1);
  EXPECT_EQ(stretched.op(), OpKind::broadcast);
  EXPECT_EQ(stretched.node().attr<BroadcastAttrs>().dims, (Axes{1}));
  EXPECT_TRUE(operand(stretched, 0).is(row));
  expect_type(stretched, DType::f32, {4, 3});

  // Size-1 dims on both sides stretch both operands.
  Value col = g.input("col", DType::f32, {2, 1, 5});
  Value mid = g.input("mid", DType::f32, {4, 1});
  Value both = sub(col, mid);
  expect_type(both, DType::f32, {2, 4, 5});
  EXPECT_EQ(operand(both, 0).op(), OpKind::broadcast);
  EXPECT_EQ(operand(both, 0).node().attr<BroadcastAttrs>().dims, (Axes{0, 1, 2}));
  EXPECT_EQ(operand(both, 1).node().attr<BroadcastAttrs>().dims, (Axes{1, 2}));

  // Rank-0 scalars broadcast with no dims.
  Value s = g.input("s", DType::f32, {});
  Value scaled = s * a;
  expect_type(scaled, DType::f32, {4, 3});
  EXPECT_EQ(operand(scaled, 0).node().attr<BroadcastAttrs>().dims, Axes{});
  expect_type(s * s, DType::f32, {});
}

TEST(IrBuilders, DoubleOperandsTakeTheOtherDtype) {
  Graph g;
  Value n = g.input("n", DType::i64, {2, 2});
  for (Value v : {n + 1.0, n - 1.0, n * 2.0, n / 2.0, 1.0 + n, 1.0 - n, 2.0 * n, 2.0 / n}) {
    expect_type(v, DType::i64, {2, 2});
  }
  Value half = n / 2.0;
  EXPECT_EQ(half.op(), OpKind::div);
  Value constant_side = operand(operand(half, 1), 0);
  EXPECT_EQ(constant_side.op(), OpKind::constant);
  expect_type(constant_side, DType::i64, {});
  EXPECT_EQ(constant_side.node().attr<ConstantAttrs>().value.get(0), 2.0);
  Value rev = 1.0 - n;
  EXPECT_EQ(operand(operand(rev, 0), 0).op(), OpKind::constant);
  EXPECT_TRUE(operand(rev, 1).is(n));

  Value x = g.input("x", DType::f16, {3});
  Value squared = pow(x, 2.0);
  expect_type(squared, DType::f16, {3});
  EXPECT_EQ(squared.op(), OpKind::pow);
  expect_type(-x, DType::f16, {3});
  EXPECT_EQ((-x).op(), OpKind::neg);
}

TEST(IrBuilders, BinaryErrors) {
  Graph g, other;
  Value a = g.input("a", DType::f32, {4, 3});
  Value b = g.input("b", DType::f32, {5, 3});
  Value n = g.input("n", DType::i32, {4, 3});
  Value p = g.input("p", DType::boolean, {4, 3});
  Value elsewhere = other.input("e", DType::f32, {4, 3});
  EXPECT_EQ(error_of([&] { add(a, b); }), "[add] cannot broadcast (4,3) with (5,3)");
  EXPECT_EQ(error_of([&] { add(a, n); }), "[add] dtype mismatch: f32 vs i32");
  EXPECT_EQ(error_of([&] { mul(a, Value()); }), "[mul] operand 1 is an empty Value");
  EXPECT_EQ(error_of([&] { div(a, elsewhere); }), "[div] operands belong to different graphs");
  EXPECT_EQ(error_of([&] { max(p, p); }), "[max] needs a numeric dtype, got bool");
  EXPECT_EQ(error_of([&] { pow(p, p); }), "[pow] needs a numeric dtype, got bool");
  EXPECT_EQ(error_of([&] { logical_and(a, a); }), "[logical_and] needs bool, got f32");
  expect_type(logical_or(p, p), DType::boolean, {4, 3});
  expect_type(min(n, n), DType::i32, {4, 3});
  expect_type(pow(n, n), DType::i32, {4, 3});
}

// ---- compare, select, cast ----

TEST(IrBuilders, CompareGivesBoolAndBroadcasts) {
  Graph g;
  Value a = g.input("a", DType::f32, {4, 1});
  Value b = g.input("b", DType::f32, {3});
  for (Binary fn : std::initializer_list<Binary>{eq, ne, lt, le, gt, ge})
    expect_type(fn(a, b), DType::boolean, {4, 3});
  Value c = ge(a, b);
  EXPECT_EQ(c.op(), OpKind::compare);
  EXPECT_EQ(c.node().attr<CompareAttrs>().dir, CompareDir::ge);
  EXPECT_EQ(operand(c, 0).op(), OpKind::broadcast);
  Value n = g.input("n", DType::i32, {3});
  EXPECT_EQ(error_of([&] { lt(a, n); }), "[compare] dtype mismatch: f32 vs i32");
  EXPECT_EQ(error_of([&] { eq(b, g.input("c", DType::f32, {2})); }),
            "[compare] cannot broadcast (3) with (2)");
}

TEST(IrBuilders, SelectBroadcastsAllThree) {
  Graph g;
  Value pred = g.input("pred", DType::boolean, {2, 1, 1});
  Value on_true = g.input("t", DType::f64, {3, 1});
  Value on_false = g.input("f", DType::f64, {4});
  Value s = select(pred, on_true, on_false);
  expect_type(s, DType::f64, {2, 3, 4});
  for (size_t i = 0; i < 3; ++i)
    expect_type(operand(s, i), i == 0 ? DType::boolean : DType::f64, {2, 3, 4});
  Value x = g.input("x", DType::f32, {4});
  EXPECT_EQ(error_of([&] { select(x, on_false, on_false); }),
            "[select] pred must be bool, got f32");
  EXPECT_EQ(error_of([&] { select(pred, on_true, x); }), "[select] dtype mismatch: f64 vs f32");
  Value wide = g.input("w", DType::f64, {5, 1});
  EXPECT_EQ(error_of([&] { select(pred, on_true, wide); }),
            "[select] cannot broadcast (2,1,1) with (3,1) with (5,1)");
}

TEST(IrBuilders, Cast) {
  Graph g;
  Value x = g.input("x", DType::f32, {2, 3});
  Value c = cast(x, DType::bf16);
  expect_type(c, DType::bf16, {2, 3});
  EXPECT_EQ(c.op(), OpKind::cast);
  EXPECT_TRUE(cast(x, DType::f32).is(x));
  EXPECT_EQ(error_of([&] { cast(Value(), DType::f32); }), "[cast] operand is an empty Value");
}

// ---- layout ----

TEST(IrBuilders, BroadcastInDim) {
  Graph g;
  Value x = g.input("x", DType::f32, {3, 1});
  Value b = broadcast_in_dim(x, {3, 2, 5}, {0, 2});
  expect_type(b, DType::f32, {3, 2, 5});
  EXPECT_EQ(b.node().attr<BroadcastAttrs>().dims, (Axes{0, 2}));
  EXPECT_TRUE(broadcast_in_dim(x, {3, 1}, {0, 1}).is(x));
  EXPECT_EQ(error_of([&] {
              broadcast_in_dim(x, {3, 2, 5}, {2, 0});
            }),
            "[broadcast_in_dim] dims [2,0] must be strictly increasing");
  EXPECT_EQ(error_of([&] {
              broadcast_in_dim(x, {3, 2, 5}, {0, 3});
            }),
            "[broadcast_in_dim] dims [0,3] out of range for output (3,2,5)");
  EXPECT_EQ(error_of([&] {
              broadcast_in_dim(x, {3, 2, 5}, {1, 2});
            }),
            "[broadcast_in_dim] cannot broadcast (3,1) to (3,2,5) along dims [1,2]");
  EXPECT_EQ(error_of([&] {
              broadcast_in_dim(x, {3, 2, 5}, {0});
            }),
            "[broadcast_in_dim] dims [0] must name one output dim per dim of (3,1)");
}

TEST(IrBuilders, BroadcastTo) {
  Graph g;
  Value x = g.input("x", DType::i32, {3, 1});
  Value b = broadcast_to(x, {2, 3, 4});
  expect_type(b, DType::i32, {2, 3, 4});
  EXPECT_EQ(b.node().attr<BroadcastAttrs>().dims, (Axes{1, 2}));
  EXPECT_EQ(error_of([&] {
              broadcast_to(x, {4, 3});
            }),
            "[broadcast_to] cannot broadcast (3,1) to (4,3)");
  EXPECT_EQ(error_of([&] { broadcast_to(x, {3}); }),
            "[broadcast_to] cannot broadcast (3,1) to (3)");
}

TEST(IrBuilders, Reshape) {
  Graph g;
  Value x = g.input("x", DType::f32, {4, 3});
  expect_type(reshape(x, {2, -1}), DType::f32, {2, 6});
  expect_type(reshape(x, {12}), DType::f32, {12});
  expect_type(reshape(x, {1, 3, 1, 4}), DType::f32, {1, 3, 1, 4});
  EXPECT_EQ(reshape(x, {2, 6}).op(), OpKind::reshape);
  EXPECT_TRUE(reshape(x, {-1, 3}).is(x));
  EXPECT_EQ(error_of([&] {
              reshape(x, {5, -1});
            }),
            "[reshape] (4,3) has 12 elements, target (5,-1) does not divide");
  EXPECT_EQ(error_of([&] {
              reshape(x, {5, 2});
            }),
            "[reshape] (4,3) has 12 elements, target (5,2) has 10");
  EXPECT_EQ(error_of([&] {
              reshape(x, {-1, -1});
            }),
            "[reshape] target (-1,-1) has more than one -1");
  EXPECT_EQ(error_of([&] { reshape(x, {-3, -4}); }), "[reshape] target (-3,-4) has a negative dim");
}

TEST(IrBuilders, Transpose) {
  Graph g;
  Value x = g.input("x", DType::f32, {2, 3, 4});
  Value t = transpose(x, {2, 0, 1});
  expect_type(t, DType::f32, {4, 2, 3});
  EXPECT_EQ(t.node().attr<TransposeAttrs>().perm, (Axes{2, 0, 1}));
  EXPECT_TRUE(transpose(x, {0, 1, 2}).is(x));
  Value last2 = transpose_last2(x);
  expect_type(last2, DType::f32, {2, 4, 3});
  EXPECT_EQ(last2.node().attr<TransposeAttrs>().perm, (Axes{0, 2, 1}));
  EXPECT_EQ(error_of([&] {
              transpose(x, {0, 0, 1});
            }),
            "[transpose] perm [0,0,1] is not a permutation of the dims of (2,3,4)");
  EXPECT_EQ(error_of([&] {
              transpose(x, {1, 0});
            }),
            "[transpose] perm [1,0] is not a permutation of the dims of (2,3,4)");
  Value v = g.input("v", DType::f32, {4});
  EXPECT_EQ(error_of([&] { transpose_last2(v); }), "[transpose_last2] needs rank >= 2, got (4)");
}

TEST(IrBuilders, Slice) {
  Graph g;
  Value x = g.input("x", DType::f32, {10, 4});
  Value s = slice(x, {1, 0}, {8, 4}, {3, 1});
  expect_type(s, DType::f32, {3, 4});  // rows 1, 4, 7
  EXPECT_EQ(s.node().attr<SliceAttrs>().stride, (Shape{3, 1}));
  expect_type(slice(x, {2, 1}, {2, 3}), DType::f32, {0, 2});
  EXPECT_EQ(slice(x, {0, 1}, {10, 3}).node().attr<SliceAttrs>().stride, (Shape{1, 1}));
  EXPECT_TRUE(slice(x, {0, 0}, {10, 4}).is(x));
  EXPECT_EQ(error_of([&] {
              slice(x, {0, 3}, {10, 5});
            }),
            "[slice] dim 1: start 3, limit 5 not within 0 <= start <= limit <= 4 of (10,4)");
  EXPECT_EQ(error_of([&] {
              slice(x, {5, 0}, {4, 4});
            }),
            "[slice] dim 0: start 5, limit 4 not within 0 <= start <= limit <= 10 of (10,4)");
  EXPECT_EQ(error_of([&] {
              slice(x, {0, 0}, {10, 4}, {1, 0});
            }),
            "[slice] dim 1: stride 0 must be >= 1");
  EXPECT_EQ(error_of([&] { slice(x, {0}, {10}); }),
            "[slice] start [0], limit [10], stride [1,1] need one entry per dim of (10,4)");
}

TEST(IrBuilders, Concat) {
  Graph g;
  Value a = g.input("a", DType::f32, {2, 3});
  Value b = g.input("b", DType::f32, {2, 5});
  Value c = concat({a, b, a}, -1);
  expect_type(c, DType::f32, {2, 11});
  EXPECT_EQ(c.node().attr<ConcatAttrs>().axis, 1);
  EXPECT_EQ(c.node().inputs.size(), 3u);
  EXPECT_TRUE(concat({a}, 0).is(a));
  EXPECT_EQ(error_of([&] {
              concat({a, b}, 0);
            }),
            "[concat] part 1 (2,5) does not match part 0 (2,3) outside axis 0");
  Value n = g.input("n", DType::i32, {2, 3});
  EXPECT_EQ(error_of([&] { concat({a, n}, 0); }), "[concat] dtype mismatch: f32 vs i32");
  EXPECT_EQ(error_of([&] { concat({}, 0); }), "[concat] needs at least one part");
  EXPECT_EQ(error_of([&] { concat({a, a}, 2); }), "[concat] axis 2 out of range for rank 2");
}

TEST(IrBuilders, Pad) {
  Graph g;
  Value x = g.input("x", DType::f32, {2, 3});
  Value p = pad(x, {1, 0}, {2, 4}, -1.5);
  expect_type(p, DType::f32, {5, 7});
  EXPECT_EQ(p.node().attr<PadAttrs>().value, -1.5);
  EXPECT_TRUE(pad(x, {0, 0}, {0, 0}).is(x));
  EXPECT_EQ(error_of([&] {
              pad(x, {0, -1}, {0, 0});
            }),
            "[pad] low [0,-1], high [0,0] must be non-negative");
  EXPECT_EQ(error_of([&] { pad(x, {0}, {0}); }),
            "[pad] low [0], high [0] need one entry per dim of (2,3)");
}

// ---- reductions ----

TEST(IrBuilders, ReduceSumAndMax) {
  Graph g;
  Value x = g.input("x", DType::f32, {2, 3, 4});
  Value s = reduce_sum(x, {-1, 0});
  expect_type(s, DType::f32, {3});
  EXPECT_EQ(s.node().attr<ReduceAttrs>().axes, (Axes{0, 2}));
  Value all = reduce_max(x);
  expect_type(all, DType::f32, {});
  EXPECT_EQ(all.node().attr<ReduceAttrs>().axes, (Axes{0, 1, 2}));
  Value kept = reduce_max(x, {1}, true);
  expect_type(kept, DType::f32, {2, 1, 4});
  EXPECT_EQ(kept.op(), OpKind::reshape);
  EXPECT_EQ(operand(kept, 0).op(), OpKind::reduce_max);
  expect_type(reduce_sum(x, {}, true), DType::f32, {1, 1, 1});
  Value scalar = g.input("s", DType::f32, {});
  EXPECT_TRUE(reduce_sum(scalar).is(scalar));
  Value n = g.input("n", DType::i32, {5});
  expect_type(reduce_sum(n), DType::i32, {});

  EXPECT_EQ(error_of([&] { reduce_sum(x, {3}); }), "[reduce_sum] axis 3 out of range for rank 3");
  EXPECT_EQ(error_of([&] {
              reduce_sum(x, {1, -2});
            }),
            "[reduce_sum] axes [1,-2] name a dim of (2,3,4) twice");
  Value empty = g.input("e", DType::f32, {2, 0});
  EXPECT_EQ(error_of([&] { reduce_max(empty, {1}); }),
            "[reduce_max] cannot reduce empty axis 1 of (2,0)");
  Value p = g.input("p", DType::boolean, {2});
  EXPECT_EQ(error_of([&] { reduce_sum(p); }), "[reduce_sum] needs a numeric dtype, got bool");
}

TEST(IrBuilders, Mean) {
  Graph g;
  Value x = g.input("x", DType::f64, {2, 3, 4});
  Value m = mean(x, {-2}, true);
  expect_type(m, DType::f64, {2, 1, 4});
  EXPECT_EQ(m.op(), OpKind::div);
  Value divisor = operand(operand(m, 1), 0);
  EXPECT_EQ(divisor.node().attr<ConstantAttrs>().value.get(0), 3.0);
  expect_type(mean(x), DType::f64, {});
  Value n = g.input("n", DType::i32, {5});
  EXPECT_EQ(error_of([&] { mean(n); }), "[mean] needs a floating dtype, got i32");
}

// ---- VJP rules: one cotangent per operand, shaped and typed like it ----

void expect_vjp_matches_operands(Value out, size_t expected_gradients) {
  const OpInfo& info = op_info(out.op());
  ASSERT_NE(info.vjp, nullptr) << info.name;
  std::vector<Value> inputs;
  for (size_t i = 0; i < out.node().inputs.size(); ++i) inputs.push_back(operand(out, i));
  Value cotangent = out.graph().input("g", out.dtype(), out.shape());
  std::vector<Value> grads = info.vjp(VjpArgs{out.node(), out, inputs, cotangent});
  ASSERT_EQ(grads.size(), inputs.size()) << info.name;
  size_t flowing = 0;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].valid()) continue;
    ++flowing;
    EXPECT_EQ(dtype_name(grads[i].dtype()), dtype_name(inputs[i].dtype())) << info.name;
    EXPECT_EQ(shape_str(grads[i].shape()), shape_str(inputs[i].shape())) << info.name;
  }
  EXPECT_EQ(flowing, expected_gradients) << info.name;
}

TEST(IrBuilders, VjpShapesMatchOperands) {
  Graph g;
  Value x = g.input("x", DType::f32, {2, 3});
  Value y = g.input("y", DType::f32, {2, 3});
  Value n = g.input("n", DType::i32, {2, 3});
  for (Unary fn : kFloatUnary) {
    expect_vjp_matches_operands(fn(x), 1);
  }
  for (Binary fn : std::initializer_list<Binary>{add, sub, mul, div, max, min, pow}) {
    expect_vjp_matches_operands(fn(x, y), 2);
  }
  expect_vjp_matches_operands(add(n, n), 0);
  expect_vjp_matches_operands(select(lt(x, y), x, y), 2);
  expect_vjp_matches_operands(cast(x, DType::f64), 1);
  expect_vjp_matches_operands(cast(x, DType::i32), 0);
  expect_vjp_matches_operands(cast(n, DType::f32), 0);
  Value col = g.input("col", DType::f32, {2, 1});
  expect_vjp_matches_operands(broadcast_in_dim(col, {4, 2, 3}, {1, 2}), 1);
  expect_vjp_matches_operands(reshape(x, {3, 2}), 1);
  expect_vjp_matches_operands(transpose(g.input("t", DType::f32, {2, 3, 4}), {2, 0, 1}), 1);
  expect_vjp_matches_operands(slice(g.input("s", DType::f32, {7, 5}), {1, 0}, {7, 4}, {2, 3}), 1);
  expect_vjp_matches_operands(slice(x, {1, 3}, {1, 3}), 1);
  expect_vjp_matches_operands(concat({x, col, y}, 1), 3);
  expect_vjp_matches_operands(pad(x, {1, 0}, {0, 2}), 1);
  expect_vjp_matches_operands(reduce_sum(x, {0}), 1);
  expect_vjp_matches_operands(reduce_max(x, {1}), 1);
}

TEST(IrBuilders, BroadcastVjpSumsNewAndStretchedDims) {
  Graph g;
  Value col = g.input("col", DType::f32, {2, 1});
  Value b = broadcast_in_dim(col, {4, 2, 3}, {1, 2});
  Value cotangent = g.input("g", DType::f32, {4, 2, 3});
  std::vector<Value> inputs{col};
  Value grad = op_info(OpKind::broadcast).vjp(VjpArgs{b.node(), b, inputs, cotangent})[0];
  EXPECT_EQ(grad.op(), OpKind::reshape);
  Value summed = operand(grad, 0);
  EXPECT_EQ(summed.op(), OpKind::reduce_sum);
  EXPECT_EQ(summed.node().attr<ReduceAttrs>().axes, (Axes{0, 2}));
  EXPECT_TRUE(operand(summed, 0).is(cotangent));
}

}  // namespace
}  // namespace kiln
