// Every op of the reference backend on small inputs, against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/philox.h"
#include "support/testing.h"

namespace kiln {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kLn2 = std::log(2.0);
const double kLn3 = std::log(3.0);

Tensor values(DType dtype, Shape shape, const std::vector<double>& v) {
  return Tensor::from_doubles(dtype, std::move(shape), v);
}

// Checks dtype, shape and values (NaN matches NaN) within `tol`, absolute and relative.
void expect_tensor(const Tensor& actual, DType dtype, const Shape& shape,
                   const std::vector<double>& expected, double tol = 0.0) {
  EXPECT_EQ(dtype_name(actual.dtype()), dtype_name(dtype));
  ASSERT_EQ(shape_str(actual.shape()), shape_str(shape));
  EXPECT_ALLCLOSE(actual, Tensor::from_doubles(DType::f64, shape, expected), tol, tol);
}

Tensor run1(Value out, const std::vector<Tensor>& arguments) {
  return evaluate_reference(out.graph(), {out}, arguments)[0];
}

// The message of the Error that `body` throws, or "" when it throws none.
std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ReferenceForward, AddBroadcastsAndTakesScalars) {
  Graph g;
  Value a = g.input("a", DType::f32, {2, 3});
  Value b = g.input("b", DType::f32, {3});
  Tensor ta = values(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor tb = values(DType::f32, {3}, {10, 20, 30});
  std::vector<Tensor> out = evaluate_reference(g, {a + b, a + 1.5, 2.0 - b}, {ta, tb});
  expect_tensor(out[0], DType::f32, {2, 3}, {11, 22, 33, 14, 25, 36});
  expect_tensor(out[1], DType::f32, {2, 3}, {2.5, 3.5, 4.5, 5.5, 6.5, 7.5});
  expect_tensor(out[2], DType::f32, {3}, {-8, -18, -28});
}

TEST(ReferenceForward, FloatingBinaryOps) {
  Graph g;
  Value a = g.input("a", DType::f64, {4});
  Value b = g.input("b", DType::f64, {4});
  Tensor ta = values(DType::f64, {4}, {1, -2, 9, kNaN});
  Tensor tb = values(DType::f64, {4}, {4, 3, 0.5, 1});
  Value head_a = slice(a, {0}, {3});
  Value head_b = slice(b, {0}, {3});
  std::vector<Tensor> out = evaluate_reference(
      g, {a - b, a * b, a / b, max(a, b), min(a, b), pow(head_b, head_a), pow(b, 2.0)}, {ta, tb});
  expect_tensor(out[0], DType::f64, {4}, {-3, -5, 8.5, kNaN});
  expect_tensor(out[1], DType::f64, {4}, {4, -6, 4.5, kNaN});
  expect_tensor(out[2], DType::f64, {4}, {0.25, -2.0 / 3.0, 18, kNaN});
  expect_tensor(out[3], DType::f64, {4}, {4, 3, 9, kNaN});
  expect_tensor(out[4], DType::f64, {4}, {1, -2, 0.5, kNaN});
  expect_tensor(out[5], DType::f64, {3}, {4, 1.0 / 9.0, 1.0 / 512.0});
  expect_tensor(out[6], DType::f64, {4}, {16, 9, 0.25, 1});
}

TEST(ReferenceForward, FloatingUnaryOps) {
  Graph g;
  Value x = g.input("x", DType::f64, {4});
  Tensor tx = values(DType::f64, {4}, {0, 1, -2.5, kNaN});
  std::vector<Tensor> out = evaluate_reference(g, {-x, abs(x), sign(x)}, {tx});
  expect_tensor(out[0], DType::f64, {4}, {0, -1, 2.5, kNaN});
  expect_tensor(out[1], DType::f64, {4}, {0, 1, 2.5, kNaN});
  expect_tensor(out[2], DType::f64, {4}, {0, 1, -1, kNaN});

  Graph h;
  Value y = h.input("y", DType::f64, {3});
  Tensor ty = values(DType::f64, {3}, {0, 1, kLn3});
  out = evaluate_reference(h, {exp(y), tanh(y * 0.5), logistic(y), erf(y)}, {ty});
  double tol = 1e-15;
  expect_tensor(out[0], DType::f64, {3}, {1, std::numbers::e, 3}, tol);
  expect_tensor(out[1], DType::f64, {3}, {0, std::tanh(0.5), 0.5}, tol);  // (3-1)/(3+1)
  expect_tensor(out[2], DType::f64, {3}, {0.5, 1 / (1 + 1 / std::numbers::e), 0.75}, tol);
  expect_tensor(out[3], DType::f64, {3}, {0, 0.8427007929497149, std::erf(kLn3)}, tol);

  Graph p;
  Value z = p.input("z", DType::f32, {3});
  Tensor tz = values(DType::f32, {3}, {4, 1, std::numbers::e});
  out = evaluate_reference(p, {sqrt(z), rsqrt(z), log(z)}, {tz});
  expect_tensor(out[0], DType::f32, {3}, {2, 1, std::sqrt(tz.get(2))}, 1e-7);
  expect_tensor(out[1], DType::f32, {3}, {0.5, 1, 1 / std::sqrt(tz.get(2))}, 1e-7);
  expect_tensor(out[2], DType::f32, {3}, {std::log(4.0), 0, 1}, 1e-7);
}

TEST(ReferenceForward, IntegerDivTruncatesAndI32Wraps) {
  Graph g;
  Value a = g.input("a", DType::i32, {4});
  Value b = g.input("b", DType::i32, {4});
  Tensor ta = values(DType::i32, {4}, {7, -7, 7, -7});
  Tensor tb = values(DType::i32, {4}, {2, 2, -2, -2});
  std::vector<Tensor> out =
      evaluate_reference(g, {a / b, max(a, b), min(a, b), abs(a), sign(b)}, {ta, tb});
  expect_tensor(out[0], DType::i32, {4}, {3, -3, -3, 3});
  expect_tensor(out[1], DType::i32, {4}, {7, 2, 7, -2});
  expect_tensor(out[2], DType::i32, {4}, {2, -7, -2, -7});
  expect_tensor(out[3], DType::i32, {4}, {7, 7, 7, 7});
  expect_tensor(out[4], DType::i32, {4}, {1, 1, -1, -1});

  Graph w;
  Value x = w.input("x", DType::i32, {3});
  Value y = w.input("y", DType::i32, {3});
  Tensor tx = values(DType::i32, {3}, {2147483647, 65536, -2147483648.0});
  Tensor ty = values(DType::i32, {3}, {1, 65536, -1});
  out = evaluate_reference(w, {x + y, x * y, -x, x / y, pow(y, y)}, {tx, ty});
  expect_tensor(out[0], DType::i32, {3}, {-2147483648.0, 131072, 2147483647});
  expect_tensor(out[1], DType::i32, {3}, {2147483647, 0, -2147483648.0});
  expect_tensor(out[2], DType::i32, {3}, {-2147483647, -65536, -2147483648.0});
  expect_tensor(out[3], DType::i32, {3}, {2147483647, 1, -2147483648.0});
  expect_tensor(out[4], DType::i32, {3}, {1, 0, -1});  // 65536^65536 wraps to 0; (-1)^-1 = -1

  Graph z;
  Value n = z.input("n", DType::i32, {2});
  Value d = z.input("d", DType::i32, {2});
  std::string message = error_of([&] {
    run1(n / d, {values(DType::i32, {2}, {1, 2}), values(DType::i32, {2}, {1, 0})});
  });
  EXPECT_NE(message.find("[div]"), std::string::npos) << message;
}

TEST(ReferenceForward, I64AndU32StayExact) {
  Graph g;
  Value a = g.input("a", DType::i64, {2});
  Value b = g.input("b", DType::i64, {2});
  Tensor ta(DType::i64, {2});
  Tensor tb(DType::i64, {2});
  ta.data_as<int64_t>()[0] = (int64_t{1} << 53) + 1;  // not representable as a double
  ta.data_as<int64_t>()[1] = std::numeric_limits<int64_t>::max();
  tb.data_as<int64_t>()[0] = 1;
  tb.data_as<int64_t>()[1] = 1;
  std::vector<Tensor> out = evaluate_reference(g, {a + b, lt(a, a + b), reduce_sum(a)}, {ta, tb});
  EXPECT_EQ(out[0].data_as<int64_t>()[0], (int64_t{1} << 53) + 2);
  EXPECT_EQ(out[0].data_as<int64_t>()[1], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(out[1].data_as<uint8_t>()[0], 1);
  EXPECT_EQ(out[2].data_as<int64_t>()[0], std::numeric_limits<int64_t>::min() + (int64_t{1} << 53));

  Graph u;
  Value x = u.input("x", DType::u32, {2});
  Value y = u.input("y", DType::u32, {2});
  out = evaluate_reference(
      u, {x - y, x * y},
      {values(DType::u32, {2}, {0, 4294967295.0}), values(DType::u32, {2}, {1, 2})});
  expect_tensor(out[0], DType::u32, {2}, {4294967295.0, 4294967293.0});
  expect_tensor(out[1], DType::u32, {2}, {0, 4294967294.0});
}

TEST(ReferenceForward, HalfPrecisionElementwiseRoundsOnceToNearestEven) {
  Graph g;
  Value a = g.input("a", DType::bf16, {3});
  Value b = g.input("b", DType::bf16, {3});
  // bf16 keeps 8 significant bits: 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
  Tensor ta = values(DType::bf16, {3}, {1, 1 + 0x1p-7, 3});
  Tensor tb = values(DType::bf16, {3}, {0x1p-8, 0x1p-8, 0x1p-8});
  expect_tensor(run1(a + b, {ta, tb}), DType::bf16, {3}, {1, 1 + 0x1p-6, 3});

  Graph h;
  Value c = h.input("c", DType::f16, {3});
  Value d = h.input("d", DType::f16, {3});
  // f16 keeps 11 significant bits; 65504 is its largest finite value.
  Tensor tc = values(DType::f16, {3}, {1, 1 + 0x1p-10, 65504});
  Tensor td = values(DType::f16, {3}, {0x1p-11, 0x1p-11, 16});
  expect_tensor(run1(c + d, {tc, td}), DType::f16, {3}, {1, 1 + 0x1p-9, kInf});
  expect_tensor(run1(c * d, {tc, td}), DType::f16, {3}, {0x1p-11, 0x1p-11 + 0x1p-21, kInf});
}

TEST(ReferenceForward, CompareWithNaN) {
  Graph g;
  Value a = g.input("a", DType::f32, {3});
  Value b = g.input("b", DType::f32, {3});
  Tensor ta = values(DType::f32, {3}, {1, kNaN, 2});
  Tensor tb = values(DType::f32, {3}, {1, 1, kNaN});
  std::vector<Tensor> out =
      evaluate_reference(g, {eq(a, b), ne(a, b), lt(a, b), le(a, b), gt(a, b), ge(a, b)}, {ta, tb});
  expect_tensor(out[0], DType::boolean, {3}, {1, 0, 0});
  expect_tensor(out[1], DType::boolean, {3}, {0, 1, 1});
  expect_tensor(out[2], DType::boolean, {3}, {0, 0, 0});
  expect_tensor(out[3], DType::boolean, {3}, {1, 0, 0});
  expect_tensor(out[4], DType::boolean, {3}, {0, 0, 0});
  expect_tensor(out[5], DType::boolean, {3}, {1, 0, 0});

  Graph h;
  Value x = h.input("x", DType::i32, {3});
  Value y = h.input("y", DType::i32, {3});
  out = evaluate_reference(
      h, {lt(x, y), ge(x, y)},
      {values(DType::i32, {3}, {-5, 2, 3}), values(DType::i32, {3}, {4, 2, -1})});
  expect_tensor(out[0], DType::boolean, {3}, {1, 0, 0});
  expect_tensor(out[1], DType::boolean, {3}, {0, 1, 1});
}

TEST(ReferenceForward, SelectAndLogicalOps) {
  Graph g;
  Value p = g.input("p", DType::boolean, {4});
  Value q = g.input("q", DType::boolean, {4});
  Value a = g.input("a", DType::i32, {2, 4});
  Value b = g.input("b", DType::i32, {});
  Tensor tp = values(DType::boolean, {4}, {1, 0, 1, 0});
  Tensor tq = values(DType::boolean, {4}, {1, 1, 0, 0});
  Tensor ta = values(DType::i32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor tb = values(DType::i32, {}, {-1});
  std::vector<Tensor> out = evaluate_reference(
      g, {select(p, a, b), logical_and(p, q), logical_or(p, q), logical_not(p)}, {tp, tq, ta, tb});
  expect_tensor(out[0], DType::i32, {2, 4}, {1, -1, 3, -1, 5, -1, 7, -1});
  expect_tensor(out[1], DType::boolean, {4}, {1, 0, 0, 0});
  expect_tensor(out[2], DType::boolean, {4}, {1, 1, 1, 0});
  expect_tensor(out[3], DType::boolean, {4}, {0, 1, 0, 1});
}

TEST(ReferenceForward, CastRoundsAndTruncates) {
  Graph g;
  Value x = g.input("x", DType::f32, {4});
  // Ties to even: 1 + 2^-8 -> 1 (even), 1 + 3 * 2^-8 -> 1 + 2^-6 (even); just above a tie rounds
  // up.
  Tensor tx = values(DType::f32, {4}, {1 + 0x1p-8, 1 + 3 * 0x1p-8, 1 + 0x1p-8 + 0x1p-20, -2.5});
  expect_tensor(run1(cast(x, DType::bf16), {tx}), DType::bf16, {4},
                {1, 1 + 0x1p-6, 1 + 0x1p-7, -2.5});
  Tensor th = values(DType::f32, {4}, {1 + 0x1p-11, 1 + 3 * 0x1p-11, 65520, -65519});
  expect_tensor(run1(cast(x, DType::f16), {th}), DType::f16, {4}, {1, 1 + 0x1p-9, kInf, -65504});

  Graph h;
  Value y = h.input("y", DType::f32, {8});
  Tensor ty = values(DType::f32, {8}, {2.7, -2.7, -0.5, 3, 3e9, -3e9, kNaN, 0});
  std::vector<Tensor> out =
      evaluate_reference(h, {cast(y, DType::i32), cast(y, DType::boolean)}, {ty});
  // Out of range saturates and NaN gives 0 (as XLA's convert).
  expect_tensor(out[0], DType::i32, {8}, {2, -2, 0, 3, 2147483647, -2147483648.0, 0, 0});
  expect_tensor(out[1], DType::boolean, {8}, {1, 1, 1, 1, 1, 1, 1, 0});

  Graph k;
  Value n = k.input("n", DType::i64, {3});
  Value b = k.input("b", DType::boolean, {2});
  Tensor tn = values(DType::i64, {3}, {4294967301.0, -1, 7});  // 2^32 + 5
  out = evaluate_reference(k, {cast(n, DType::i32), cast(n, DType::u32), cast(b, DType::f32)},
                           {tn, values(DType::boolean, {2}, {1, 0})});
  expect_tensor(out[0], DType::i32, {3}, {5, -1, 7});
  expect_tensor(out[1], DType::u32, {3}, {5, 4294967295.0, 7});
  expect_tensor(out[2], DType::f32, {2}, {1, 0});
}

TEST(ReferenceForward, BroadcastReshapeTranspose) {
  Graph g;
  Value x = g.input("x", DType::f32, {2});
  Value c = g.input("c", DType::f32, {2, 1});
  Tensor tx = values(DType::f32, {2}, {1, 2});
  Tensor tc = values(DType::f32, {2, 1}, {5, 7});
  std::vector<Tensor> out =
      evaluate_reference(g,
                         {broadcast_in_dim(x, {2, 3}, {0}), broadcast_in_dim(x, {3, 2}, {1}),
                          broadcast_in_dim(c, {3, 2, 2}, {1, 2})},
                         {tx, tc});
  expect_tensor(out[0], DType::f32, {2, 3}, {1, 1, 1, 2, 2, 2});
  expect_tensor(out[1], DType::f32, {3, 2}, {1, 2, 1, 2, 1, 2});
  expect_tensor(out[2], DType::f32, {3, 2, 2}, {5, 5, 7, 7, 5, 5, 7, 7, 5, 5, 7, 7});

  Graph h;
  Value y = h.input("y", DType::i32, {2, 3, 4});
  Tensor ty(DType::i32, {2, 3, 4});
  for (int64_t i = 0; i < 24; ++i) {
    ty.set(i, static_cast<double>(100 * (i / 12) + 10 * (i / 4 % 3) + i % 4));
  }
  out = evaluate_reference(h, {reshape(y, {4, -1}), transpose(y, {2, 0, 1})}, {ty});
  expect_tensor(out[0], DType::i32, {4, 6}, ty.to_doubles());
  // Output dim i is operand dim perm[i]: out[a][b][c] = y[b][c][a] = 100b + 10c + a.
  std::vector<double> expected;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 3; ++c) expected.push_back(100 * b + 10 * c + a);
    }
  }
  expect_tensor(out[1], DType::i32, {4, 2, 3}, expected);
}

TEST(ReferenceForward, SliceConcatPad) {
  Graph g;
  Value x = g.input("x", DType::f32, {10});
  Value m = g.input("m", DType::f32, {3, 4});
  Tensor tx = values(DType::f32, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor tm = values(DType::f32, {3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  std::vector<Tensor> out = evaluate_reference(
      g, {slice(x, {1}, {8}, {3}), slice(m, {0, 1}, {3, 4}, {2, 2}), slice(m, {1, 0}, {2, 4})},
      {tx, tm});
  expect_tensor(out[0], DType::f32, {3}, {1, 4, 7});
  expect_tensor(out[1], DType::f32, {2, 2}, {1, 3, 21, 23});
  expect_tensor(out[2], DType::f32, {1, 4}, {10, 11, 12, 13});

  Graph h;
  Value a = h.input("a", DType::i64, {2, 2});
  Value b = h.input("b", DType::i64, {2, 1});
  Tensor ta = values(DType::i64, {2, 2}, {1, 2, 3, 4});
  Tensor tb = values(DType::i64, {2, 1}, {5, 6});
  out = evaluate_reference(
      h,
      {concat({a, b}, 1), concat({a, a}, 0), pad(a, {0, 1}, {1, 0}, 0), pad(b, {1, 0}, {0, 2}, 9)},
      {ta, tb});
  expect_tensor(out[0], DType::i64, {2, 3}, {1, 2, 5, 3, 4, 6});
  expect_tensor(out[1], DType::i64, {4, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  expect_tensor(out[2], DType::i64, {3, 3}, {0, 1, 2, 0, 3, 4, 0, 0, 0});
  expect_tensor(out[3], DType::i64, {3, 3}, {9, 9, 9, 5, 9, 9, 6, 9, 9});
}

TEST(ReferenceForward, ReduceOverSeveralAxes) {
  Graph g;
  Value x = g.input("x", DType::f32, {2, 3, 4});
  Tensor tx(DType::f32, {2, 3, 4});
  for (int64_t i = 0; i < 24; ++i) {
    tx.set(i, static_cast<double>(100 * (i / 12) + 10 * (i / 4 % 3) + i % 4));
  }
  std::vector<Tensor> out = evaluate_reference(
      g, {reduce_sum(x, {0, 2}), reduce_max(x, {1, 2}), reduce_sum(x), reduce_max(x, {-1}, true)},
      {tx});
  // sum over i, k of 100i + 10j + k = 400 + 80j + 12.
  expect_tensor(out[0], DType::f32, {3}, {412, 492, 572});
  expect_tensor(out[1], DType::f32, {2}, {23, 123});
  expect_tensor(out[2], DType::f32, {}, {1476});
  expect_tensor(out[3], DType::f32, {2, 3, 1}, {3, 13, 23, 103, 113, 123});

  Graph h;
  Value y = h.input("y", DType::f64, {2, 2});
  Value n = h.input("n", DType::i32, {2});
  out = evaluate_reference(
      h, {reduce_max(y, {1}), reduce_sum(n)},
      {values(DType::f64, {2, 2}, {kNaN, 1, 2, -kInf}), values(DType::i32, {2}, {2147483647, 1})});
  expect_tensor(out[0], DType::f64, {2}, {kNaN, 2});
  expect_tensor(out[1], DType::i32, {}, {-2147483648.0});
}

TEST(ReferenceForward, DotGeneralWithBatchAndContractingDims) {
  Graph g;
  Value lhs = g.input("lhs", DType::f32, {2, 3, 2});  // [b, k, m]
  Value rhs = g.input("rhs", DType::f32, {3, 2, 2});  // [k, b, n]
  Tensor tl = values(DType::f32, {2, 3, 2}, {1, 2, 3, 4, 5, 6, -1, 0, 2, 1, -2, 3});
  Tensor tr = values(DType::f32, {3, 2, 2}, {1, 0, 2, 1, -1, 1, 0, 2, 3, -1, 1, 1});
  Value out = dot_general(lhs, rhs, DotAttrs{{0}, {1}, {1}, {0}});
  // out[b][m][n] = sum_k lhs[b][k][m] * rhs[k][b][n]; e.g. out[0][0][0] = 1*1 + 3*(-1) + 5*3 = 13.
  expect_tensor(run1(out, {tl, tr}), DType::f32, {2, 2, 2}, {13, -2, 16, -2, -4, 1, 3, 5});

  Graph h;
  Value li = h.input("li", DType::i32, {2, 3});
  Value ri = h.input("ri", DType::i32, {3, 2});
  Tensor tli = values(DType::i32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor tri = values(DType::i32, {3, 2}, {7, 8, 9, 10, 11, 12});
  expect_tensor(run1(matmul(li, ri), {tli, tri}), DType::i32, {2, 2}, {58, 64, 139, 154});
}

TEST(ReferenceForward, MatmulBroadcastsBatchDims) {
  Graph g;
  Value a = g.input("a", DType::f64, {2, 1, 2});
  Value b = g.input("b", DType::f64, {2, 3});
  Tensor ta = values(DType::f64, {2, 1, 2}, {1, 2, -1, 3});
  Tensor tb = values(DType::f64, {2, 3}, {1, 0, 2, 0, 1, 4});
  expect_tensor(run1(matmul(a, b), {ta, tb}), DType::f64, {2, 1, 3}, {1, 2, 10, -1, 3, 10});
}

TEST(ReferenceForward, HalfPrecisionDotAccumulatesInDoubleAndRoundsOnce) {
  Graph g;
  Value a = g.input("a", DType::bf16, {1, 3});
  Value b = g.input("b", DType::bf16, {3, 1});
  Tensor ta = values(DType::bf16, {1, 3}, {1, 0x1p-9, 0x1p-9});
  Tensor tb = values(DType::bf16, {3, 1}, {1, 1, 1});
  DotAttrs dims{{}, {}, {1}, {0}};
  // The sum 1 + 2^-8 is exact in f32 and a bf16 tie (rounds to 1); accumulating in bf16 would
  // have lost both 2^-9 terms even for an f32 output.
  expect_tensor(run1(dot_general(a, b, dims, DType::f32), {ta, tb}), DType::f32, {1, 1},
                {1 + 0x1p-8});
  expect_tensor(run1(dot_general(a, b, dims), {ta, tb}), DType::bf16, {1, 1}, {1});

  Graph h;
  Value c = h.input("c", DType::f16, {2, 2});
  Value d = h.input("d", DType::f16, {2, 2});
  Tensor tc = values(DType::f16, {2, 2}, {1.5, 2, 0.25, -3});
  Tensor td = values(DType::f16, {2, 2}, {2, 1, 4, 0.5});
  expect_tensor(run1(matmul(c, d), {tc, td}), DType::f16, {2, 2}, {11, 2.5, -11.5, -1.25});
}

TEST(ReferenceForward, GatherAndScatterAddWithDuplicates) {
  Graph g;
  Value x = g.input("x", DType::f32, {3, 2});
  Value i = g.input("i", DType::i32, {3});
  Value m = g.input("m", DType::f32, {2, 3});
  Value j = g.input("j", DType::i64, {2, 2});
  Tensor tx = values(DType::f32, {3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor ti = values(DType::i32, {3}, {2, 0, 2});
  Tensor tm = values(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor tj = values(DType::i64, {2, 2}, {2, 0, 1, 1});
  Tensor updates = values(DType::f32, {3, 2}, {10, 20, 30, 40, 50, 60});
  std::vector<Tensor> out = evaluate_reference(
      g, {gather(x, i, 0), gather(m, j, 1), scatter_add(x, i, constant(g, updates), 0)},
      {tx, ti, tm, tj});
  expect_tensor(out[0], DType::f32, {3, 2}, {5, 6, 1, 2, 5, 6});
  expect_tensor(out[1], DType::f32, {2, 2, 2}, {3, 1, 2, 2, 6, 4, 5, 5});
  // Index 2 appears twice: x[2] += u[0] + u[2]; x[0] += u[1]; x[1] is unchanged.
  expect_tensor(out[2], DType::f32, {3, 2}, {31, 42, 3, 4, 65, 86});

  Graph h;
  Value y = h.input("y", DType::i32, {2, 3});
  Value k = h.input("k", DType::i32, {4});
  Value u = h.input("u", DType::i32, {2, 4});
  Tensor tu = values(DType::i32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_tensor(run1(scatter_add(y, k, u, 1), {values(DType::i32, {2, 3}, {0, 0, 100, 0, 0, 100}),
                                               values(DType::i32, {4}, {1, 1, 2, 1}), tu}),
                DType::i32, {2, 3}, {0, 7, 103, 0, 19, 107});
}

TEST(ReferenceForward, OutOfRangeIndicesNameOpIndexAndPosition) {
  Graph g;
  Value x = g.input("x", DType::f32, {3, 2});
  Value i = g.input("i", DType::i32, {2, 2});
  Tensor tx(DType::f32, {3, 2});
  std::string message = error_of([&] {
    run1(gather(x, i, 0), {tx, values(DType::i32, {2, 2}, {0, 1, 3, 2})});
  });
  EXPECT_NE(message.find("[gather]"), std::string::npos) << message;
  EXPECT_NE(message.find("index 3"), std::string::npos) << message;
  EXPECT_NE(message.find("(1,0)"), std::string::npos) << message;

  Value updates = g.input("u", DType::f32, {2, 2, 2});
  message = error_of([&] {
    run1(scatter_add(x, i, updates, 0),
         {tx, values(DType::i32, {2, 2}, {0, -1, 1, 2}), Tensor(DType::f32, {2, 2, 2})});
  });
  EXPECT_NE(message.find("[scatter_add]"), std::string::npos) << message;
  EXPECT_NE(message.find("index -1"), std::string::npos) << message;
  EXPECT_NE(message.find("(0,1)"), std::string::npos) << message;
}

TEST(ReferenceForward, IotaAndConstant) {
  Graph g;
  Tensor c = values(DType::f64, {2}, {0.5, -4});
  Value k = constant(g, c);
  std::vector<Tensor> out = evaluate_reference(
      g, {iota(g, DType::i32, {2, 3}, 1), iota(g, DType::f32, {2, 3}, 0), k * 2.0, k}, {});
  expect_tensor(out[0], DType::i32, {2, 3}, {0, 1, 2, 0, 1, 2});
  expect_tensor(out[1], DType::f32, {2, 3}, {0, 0, 0, 1, 1, 1});
  expect_tensor(out[2], DType::f64, {2}, {1, -8});
  expect_tensor(out[3], DType::f64, {2}, {0.5, -4});
  out[3].set(0, 99);  // writing into a result leaves the graph's constant alone
  EXPECT_EQ(c.get(0), 0.5);
}

TEST(ReferenceForward, RandomBitsArePhiloxAtSeedOffsetAndStream) {
  Graph g;
  Value seed = g.input("seed", DType::i64, {});
  Value offset = g.input("offset", DType::i64, {});
  std::vector<Value> outputs = {random_bits(seed, offset, {2, 5}, 3),
                                random_bits(seed, offset, {2, 5}, 4)};
  int64_t s = (int64_t{1} << 40) + 7;  // a seed using both key words
  std::vector<Tensor> out = evaluate_reference(
      g, outputs, {values(DType::i64, {}, {static_cast<double>(s)}), values(DType::i64, {}, {11})});
  std::vector<Tensor> next = evaluate_reference(
      g, outputs, {values(DType::i64, {}, {static_cast<double>(s)}), values(DType::i64, {}, {12})});
  ASSERT_EQ(out[0].dtype(), DType::u32);
  ASSERT_EQ(out[0].shape(), (Shape{2, 5}));
  int same_stream = 0, same_offset = 0;
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(out[0].data_as<uint32_t>()[i], random_bits_at(s, 11, 3, i)) << i;
    EXPECT_EQ(out[1].data_as<uint32_t>()[i], random_bits_at(s, 11, 4, i)) << i;
    EXPECT_EQ(next[0].data_as<uint32_t>()[i], random_bits_at(s, 12, 3, i)) << i;
    same_stream += out[0].data_as<uint32_t>()[i] == out[1].data_as<uint32_t>()[i];
    same_offset += out[0].data_as<uint32_t>()[i] == next[0].data_as<uint32_t>()[i];
  }
  EXPECT_EQ(same_stream, 0);
  EXPECT_EQ(same_offset, 0);
}

TEST(ReferenceForward, SoftmaxAndLogSoftmax) {
  Graph g;
  Value x = g.input("x", DType::f64, {3, 2});
  // Column 0 is [0, ln 2, ln 3]: softmax [1, 2, 3] / 6. Column 1 is constant.
  Tensor tx = values(DType::f64, {3, 2}, {0, 5, kLn2, 5, kLn3, 5});
  std::vector<Tensor> out = evaluate_reference(g, {softmax(x, 0), log_softmax(x, 0)}, {tx});
  double tol = 1e-15;
  expect_tensor(out[0], DType::f64, {3, 2}, {1.0 / 6, 1.0 / 3, 2.0 / 6, 1.0 / 3, 3.0 / 6, 1.0 / 3},
                tol);
  expect_tensor(out[1], DType::f64, {3, 2}, {-std::log(6.0), -kLn3, -kLn3, -kLn3, -kLn2, -kLn3},
                tol);

  // Large logits: the max is subtracted first.
  Graph h;
  Value y = h.input("y", DType::f32, {2});
  Tensor ty = values(DType::f32, {2}, {1000, 1000});
  out = evaluate_reference(h, {softmax(y), log_softmax(y)}, {ty});
  expect_tensor(out[0], DType::f32, {2}, {0.5, 0.5});
  expect_tensor(out[1], DType::f32, {2}, {-kLn2, -kLn2}, 1e-7);
}

TEST(ReferenceForward, LayerNormAndGelu) {
  Graph g;
  Value x = g.input("x", DType::f64, {2, 2});
  Value gamma = g.input("gamma", DType::f64, {2});
  Value beta = g.input("beta", DType::f64, {2});
  // Row [1, 3]: mean 2, variance 1, sqrt(1 + 3) = 2. Row [5, 5]: zero variance, so y = beta.
  Tensor tx = values(DType::f64, {2, 2}, {1, 3, 5, 5});
  Tensor tg = values(DType::f64, {2}, {2, 3});
  Tensor tb = values(DType::f64, {2}, {0.5, -1});
  expect_tensor(run1(layer_norm(x, gamma, beta, 3.0), {tx, tg, tb}), DType::f64, {2, 2},
                {-0.5, 0.5, 0.5, -1}, 1e-15);

  Graph h;
  Value y = h.input("y", DType::f64, {3});
  // gelu(x) = x * Phi(x); Phi(1) = 0.8413447460685429.
  expect_tensor(run1(gelu(y), {values(DType::f64, {3}, {0, 1, -1})}), DType::f64, {3},
                {0, 0.8413447460685429, -0.15865525393145707}, 1e-15);
}

TEST(ReferenceForward, CrossEntropyIgnoresLabels) {
  Graph g;
  Value logits = g.input("logits", DType::f64, {3, 3});
  Value labels = g.input("labels", DType::i64, {3});
  Tensor tl = values(DType::f64, {3, 3}, {0, kLn2, kLn3, 9, 9, 9, 0, 0, 0});
  // Row 0, label 2: -log(3/6) = ln 2; row 1 ignored; row 2, label 0: -log(1/3) = ln 3.
  expect_tensor(run1(cross_entropy(logits, labels), {tl, values(DType::i64, {3}, {2, -100, 0})}),
                DType::f64, {}, {(kLn2 + kLn3) / 2}, 1e-15);
  // Every label ignored (a masked-LM batch where nothing was masked): 0, where PyTorch gives NaN.
  expect_tensor(
      run1(cross_entropy(logits, labels), {tl, values(DType::i64, {3}, {-100, -100, -100})}),
      DType::f64, {}, {0.0});

  Graph h;
  Value l32 = h.input("logits", DType::f32, {3, 3});
  Value lab32 = h.input("labels", DType::i32, {3});
  Tensor tl32 = tl.cast(DType::f32);
  // ignore_index 1: rows 0 (label 2) and 1 (label 0: -log(1/3) on equal logits) count.
  expect_tensor(run1(cross_entropy(l32, lab32, 1), {tl32, values(DType::i32, {3}, {2, 0, 1})}),
                DType::f32, {}, {(kLn2 + kLn3) / 2}, 1e-6);
  std::string message = error_of([&] {
    run1(cross_entropy(l32, lab32), {tl32, values(DType::i32, {3}, {0, 1, 3})});
  });
  EXPECT_NE(message.find("[cross_entropy]"), std::string::npos) << message;
  EXPECT_NE(message.find("label 3"), std::string::npos) << message;
  EXPECT_NE(message.find("row 2"), std::string::npos) << message;
}

TEST(ReferenceForward, AttentionBroadcastsTheMask) {
  Graph g;
  Value q = g.input("q", DType::f64, {2, 2, 1});
  Value k = g.input("k", DType::f64, {2, 2, 1});
  Value v = g.input("v", DType::f64, {2, 2, 2});
  Value mask = g.input("mask", DType::f64, {2, 1, 2});
  // scale 0.5: query 0 scores [ln 2, 0] -> weights [2/3, 1/3]; query 1 scores [0, 0] -> [1/2, 1/2].
  Tensor tq = values(DType::f64, {2, 2, 1}, {2, 0, 2, 0});
  Tensor tk = values(DType::f64, {2, 2, 1}, {kLn2, 0, kLn2, 0});
  Tensor tv = values(DType::f64, {2, 2, 2}, {3, 0, 0, 6, 3, 0, 0, 6});
  // Batch 1 masks key 1 for both queries (the mask's size-1 query dim is shared).
  Tensor tm = values(DType::f64, {2, 1, 2}, {0, 0, 0, -1e9});
  expect_tensor(run1(attention(q, k, v, mask, 0.5), {tq, tk, tv, tm}), DType::f64, {2, 2, 2},
                {2, 2, 1.5, 3, 3, 0, 3, 0}, 1e-14);
}

TEST(ReferenceForward, DropoutKeepsAboutOneMinusRateAndScales) {
  Graph g;
  Value x = g.input("x", DType::f32, {10000});
  Value seed = g.input("seed", DType::i64, {});
  Value offset = g.input("offset", DType::i64, {});
  Tensor tx(DType::f32, {10000});
  for (int64_t i = 0; i < tx.numel(); ++i) tx.set(i, 1.0 + static_cast<double>(i % 7));
  Tensor out = run1(dropout(x, seed, offset, 0.25, 5),
                    {tx, values(DType::i64, {}, {42}), values(DType::i64, {}, {3})});
  int64_t kept = 0;
  for (int64_t i = 0; i < tx.numel(); ++i) {
    // Kept exactly when the bits reach floor(0.25 * 2^32) = 2^30.
    bool keep = random_bits_at(42, 3, 5, i) >= (uint32_t{1} << 30);
    ASSERT_EQ(out.get(i), keep ? static_cast<float>(tx.get(i) / 0.75) : 0.0) << i;
    kept += keep;
  }
  EXPECT_NEAR(static_cast<double>(kept) / 10000.0, 0.75, 0.02);
}

TEST(ReferenceForward, BadArgumentsNameTheInput) {
  Graph g;
  Value x = g.input("tokens", DType::f32, {2, 3});
  Value y = x * 2.0;
  std::string message = error_of([&] { run1(y, {Tensor(DType::f64, {2, 3})}); });
  EXPECT_NE(message.find("'tokens'"), std::string::npos) << message;
  EXPECT_NE(message.find("f64"), std::string::npos) << message;
  message = error_of([&] { run1(y, {Tensor(DType::f32, {3, 2})}); });
  EXPECT_NE(message.find("'tokens'"), std::string::npos) << message;
  EXPECT_NE(message.find("(3,2)"), std::string::npos) << message;
  EXPECT_NE(error_of([&] { run1(y, {}); }), "");
}

TEST(ReferenceForward, ExecutableRunsRepeatedlyAndReturnsInputsAsGiven) {
  Graph g;
  Value a = g.input("a", DType::f32, {2});
  Value unused = g.input("unused", DType::i32, {});
  Value b = exp(a) * 0.0 + a;  // a diamond: `a` is used twice
  Value c = b * b;
  std::unique_ptr<Backend> backend = make_reference_backend();
  EXPECT_EQ(backend->name(), "reference");
  for (const Node& node : g.nodes()) EXPECT_TRUE(backend->supports(node));
  std::unique_ptr<Executable> exe = backend->compile(g, {c, a, b, c});
  (void)unused;
  for (double scale : {1.0, 2.0}) {
    Tensor ta = values(DType::f32, {2}, {1 * scale, -3 * scale});
    std::vector<Tensor> out = exe->run({ta, Tensor(DType::i32, {})});
    ASSERT_EQ(out.size(), 4u);
    expect_tensor(out[0], DType::f32, {2}, {1 * scale * scale, 9 * scale * scale});
    EXPECT_EQ(out[1].data(), ta.data());  // the argument itself
    expect_tensor(out[2], DType::f32, {2}, {1 * scale, -3 * scale});
    expect_tensor(out[3], DType::f32, {2}, {1 * scale * scale, 9 * scale * scale});
  }
}

}  // namespace
}  // namespace kiln
