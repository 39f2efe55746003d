// The typed loops of the reference kernels against plain per-element loops written here with
// Tensor::get/set (double in, rounded once out): dot_general in every arrangement of batch and
// contracting dims, and the bf16/f16/bool paths of elementwise, reduction, scatter and layout ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "support/testing.h"

namespace kiln {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor run1(Value out, const std::vector<Tensor>& arguments) {
  return evaluate_reference(out.graph(), {out}, arguments)[0];
}

// Exact equality of dtype, shape and values (NaN matches NaN).
void expect_same(const Tensor& actual, const Tensor& expected) {
  EXPECT_EQ(dtype_name(actual.dtype()), dtype_name(expected.dtype()));
  EXPECT_ALLCLOSE(actual, expected, 0.0, 0.0);
}

// Flat row-major offset of a multi-index.
int64_t offset_of(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + index[d];
  return offset;
}

// The multi-index of flat element `flat` of `shape`.
std::vector<int64_t> index_of(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// dot_general by its definition: for each output element (batch, lhs free, rhs free), the sum in
// double over the contracting index, row-major in lhs_contract order, stored once.
Tensor naive_dot(const Tensor& lhs, const Tensor& rhs, const DotAttrs& dims, Value result) {
  auto at = [](int64_t dim) { return static_cast<size_t>(dim); };
  auto free_of = [](const Tensor& x, const Axes& batch, const Axes& contract) {
    Axes free;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contract.begin(), contract.end(), d) == contract.end()) {
        free.push_back(d);
      }
    }
    return free;
  };
  Axes lhs_free = free_of(lhs, dims.lhs_batch, dims.lhs_contract);
  Axes rhs_free = free_of(rhs, dims.rhs_batch, dims.rhs_contract);
  Shape contract_shape;
  for (int64_t d : dims.lhs_contract) contract_shape.push_back(lhs.shape()[at(d)]);
  Tensor out(result.dtype(), result.shape());
  for (int64_t o = 0; o < out.numel(); ++o) {
    std::vector<int64_t> out_index = index_of(o, out.shape());
    std::vector<int64_t> l(lhs.shape().size()), r(rhs.shape().size());
    size_t pos = 0;
    for (size_t b = 0; b < dims.lhs_batch.size(); ++b, ++pos) {
      l[at(dims.lhs_batch[b])] = r[at(dims.rhs_batch[b])] = out_index[pos];
    }
    for (int64_t d : lhs_free) l[at(d)] = out_index[pos++];
    for (int64_t d : rhs_free) r[at(d)] = out_index[pos++];
    double acc = 0.0;
    for (int64_t c = 0; c < shape_numel(contract_shape); ++c) {
      std::vector<int64_t> contract_index = index_of(c, contract_shape);
      for (size_t j = 0; j < contract_index.size(); ++j) {
        l[at(dims.lhs_contract[j])] = r[at(dims.rhs_contract[j])] = contract_index[j];
      }
      acc += lhs.get(offset_of(l, lhs.shape())) * rhs.get(offset_of(r, rhs.shape()));
    }
    out.set(o, acc);
  }
  return out;
}

struct DotCase {
  const char* name;
  Shape lhs, rhs;
  DotAttrs dims;
};

TEST(ReferenceTyped, DotGeneralMatchesATripleLoopInEveryArrangement) {
  const std::vector<DotCase> cases = {
      {"m k . k n", {4, 5}, {5, 6}, {{}, {}, {1}, {0}}},
      {"k m . k n", {5, 4}, {5, 6}, {{}, {}, {0}, {0}}},
      {"m k . n k", {4, 5}, {6, 5}, {{}, {}, {1}, {1}}},
      {"k m . n k", {5, 4}, {6, 5}, {{}, {}, {0}, {1}}},
      {"b m k . b k n", {2, 4, 5}, {2, 5, 3}, {{0}, {0}, {2}, {1}}},
      {"m b k . k n b", {4, 2, 5}, {5, 3, 2}, {{1}, {2}, {2}, {0}}},
      {"b1 b2 m k . b2 k b1 n", {2, 3, 4, 5}, {3, 5, 2, 6}, {{0, 1}, {2, 0}, {3}, {1}}},
      {"m k1 k2 . k2 n k1", {4, 5, 3}, {3, 6, 5}, {{}, {}, {1, 2}, {2, 0}}},
      {"k2 k1 . k1 k2 (no free dims)", {3, 5}, {5, 3}, {{}, {}, {1, 0}, {0, 1}}},
      {"outer product", {4, 3}, {5, 2}, {{}, {}, {}, {}}},
      {"b m . b (batch only)", {2, 4, 3}, {2, 3}, {{0}, {0}, {}, {}}},
      {"empty contraction", {3, 0}, {0, 2}, {{}, {}, {1}, {0}}},
      // Wide enough that the contraction runs in several cache blocks, the last one partial.
      {"m k . k n, blocked", {3, 37}, {37, 2000}, {{}, {}, {1}, {0}}},
  };
  std::mt19937_64 rng(5);
  for (const DotCase& c : cases) {
    for (auto [in, out] : {std::pair{DType::f64, DType::f64}, {DType::f32, DType::f32},
                           {DType::bf16, DType::f32}, {DType::f16, DType::f16},
                           {DType::i32, DType::i32}}) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(in)));
      Graph g;
      Value lhs = g.input("lhs", in, c.lhs);
      Value rhs = g.input("rhs", in, c.rhs);
      Value result = dot_general(lhs, rhs, c.dims, out);
      bool integer = is_integer(in);
      Tensor tl = integer ? testing::random_integers(rng, in, c.lhs, -50, 50)
                          : testing::random_tensor(rng, in, c.lhs, -2, 2);
      Tensor tr = integer ? testing::random_integers(rng, in, c.rhs, -50, 50)
                          : testing::random_tensor(rng, in, c.rhs, -2, 2);
      expect_same(run1(result, {tl, tr}), naive_dot(tl, tr, c.dims, result));
    }
  }
}

TEST(ReferenceTyped, IntegerDotAccumulatesInInt64AndWraps) {
  Graph g;
  Value a = g.input("a", DType::i32, {1, 2});
  Value b = g.input("b", DType::i32, {2, 1});
  Tensor ta = Tensor::from_doubles(DType::i32, {1, 2}, {65536, 65536});
  Tensor tb = Tensor::from_doubles(DType::i32, {2, 1}, {65536, 1});
  // 2^32 + 2^16 wraps to 2^16 in i32.
  EXPECT_EQ(run1(matmul(a, b), {ta, tb}).get(0), 65536.0);
}

// Random values with the special ones mixed in: NaN, infinities, signed zeros, a subnormal-ish
// tiny value and values near the rounding boundaries of the dtype.
Tensor special_tensor(std::mt19937_64& rng, DType dtype, const Shape& shape) {
  Tensor t = testing::random_tensor(rng, dtype, shape, -3, 3);
  const double specials[] = {kNaN, kInf, -kInf, 0.0, -0.0, 1e-7, 65504.0, 1.0 + 0x1p-9};
  for (int64_t i = 0; i < t.numel(); i += 5) t.set(i, specials[static_cast<size_t>(i / 5) % 8]);
  return t;
}

using UnaryBuilder = Value (*)(Value);
struct UnaryCase {
  const char* name;
  UnaryBuilder build;
  std::function<double(double)> value;
};

TEST(ReferenceTyped, HalfPrecisionUnaryOpsMatchGetSet) {
  const std::vector<UnaryCase> cases = {
      {"neg", neg, [](double x) { return -x; }},
      {"abs", abs, [](double x) { return std::fabs(x); }},
      {"exp", exp, [](double x) { return std::exp(x); }},
      {"log", log, [](double x) { return std::log(x); }},
      {"tanh", tanh, [](double x) { return std::tanh(x); }},
      {"logistic", logistic, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"sqrt", sqrt, [](double x) { return std::sqrt(x); }},
      {"rsqrt", rsqrt, [](double x) { return 1.0 / std::sqrt(x); }},
      {"erf", erf, [](double x) { return std::erf(x); }},
      {"gelu", gelu, [](double x) { return x * 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }},
  };
  std::mt19937_64 rng(6);
  for (DType dtype : {DType::bf16, DType::f16}) {
    Tensor input = special_tensor(rng, dtype, {7, 9});
    for (const UnaryCase& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(dtype)));
      Graph g;
      Value x = g.input("x", dtype, input.shape());
      Tensor expected(dtype, input.shape());
      for (int64_t i = 0; i < input.numel(); ++i) expected.set(i, c.value(input.get(i)));
      expect_same(run1(c.build(x), {input}), expected);
    }
  }
}

using BinaryBuilder = Value (*)(Value, Value);
struct BinaryCase {
  const char* name;
  BinaryBuilder build;
  std::function<double(double, double)> value;
};

TEST(ReferenceTyped, HalfPrecisionBinaryOpsMatchGetSet) {
  auto nan_or = [](double a, double b, double value) {
    return std::isnan(a) || std::isnan(b) ? kNaN : value;
  };
  const std::vector<BinaryCase> cases = {
      {"add", add, [](double a, double b) { return a + b; }},
      {"sub", sub, [](double a, double b) { return a - b; }},
      {"mul", mul, [](double a, double b) { return a * b; }},
      {"div", div, [](double a, double b) { return a / b; }},
      {"pow", pow, [](double a, double b) { return std::pow(a, b); }},
      {"max", max, [&](double a, double b) { return nan_or(a, b, a > b ? a : b); }},
      {"min", min, [&](double a, double b) { return nan_or(a, b, a < b ? a : b); }},
  };
  std::mt19937_64 rng(7);
  for (DType dtype : {DType::bf16, DType::f16}) {
    Tensor a = special_tensor(rng, dtype, {6, 11});
    Tensor b = testing::random_tensor(rng, dtype, {6, 11}, -3, 3);
    for (const BinaryCase& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(dtype)));
      Graph g;
      Value x = g.input("a", dtype, a.shape());
      Value y = g.input("b", dtype, b.shape());
      Tensor expected(dtype, a.shape());
      for (int64_t i = 0; i < a.numel(); ++i) expected.set(i, c.value(a.get(i), b.get(i)));
      expect_same(run1(c.build(x, y), {a, b}), expected);
      Tensor swapped(dtype, a.shape());
      for (int64_t i = 0; i < a.numel(); ++i) swapped.set(i, c.value(b.get(i), a.get(i)));
      expect_same(run1(c.build(y, x), {a, b}), swapped);
    }
  }
}

TEST(ReferenceTyped, HalfPrecisionCompareSelectAndCastMatchGetSet) {
  std::mt19937_64 rng(8);
  for (DType dtype : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor a = special_tensor(rng, dtype, {4, 10});
    Tensor b = testing::random_tensor(rng, dtype, {4, 10}, -3, 3);
    Graph g;
    Value x = g.input("a", dtype, a.shape());
    Value y = g.input("b", dtype, b.shape());
    Tensor less(DType::boolean, a.shape()), picked(dtype, a.shape());
    for (int64_t i = 0; i < a.numel(); ++i) {
      less.set(i, a.get(i) < b.get(i));
      picked.set(i, a.get(i) < b.get(i) ? a.get(i) : b.get(i));
    }
    expect_same(run1(lt(x, y), {a, b}), less);
    expect_same(run1(select(lt(x, y), x, y), {a, b}), picked);
    // Casts between the floating dtypes round once from double, as Tensor::set does.
    for (DType to : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::boolean}) {
      SCOPED_TRACE(dtype_name(to));
      Tensor expected(to, a.shape());
      for (int64_t i = 0; i < a.numel(); ++i) expected.set(i, a.get(i));
      expect_same(run1(cast(x, to), {a, b}), expected);
    }
  }
}

TEST(ReferenceTyped, HalfPrecisionReductionsAndScatterAddMatchGetSet) {
  std::mt19937_64 rng(9);
  for (DType dtype : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(dtype));
    Shape shape = {4, 5, 6};
    Tensor input = testing::random_tensor(rng, dtype, shape, -4, 4);
    Graph g;
    Value x = g.input("x", dtype, shape);
    // Over dims 0 and 2, summed in row-major order in double, rounded once.
    Tensor sum(dtype, {5}), max(dtype, {5});
    for (int64_t j = 0; j < 5; ++j) {
      double s = 0.0, m = -kInf;
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t k = 0; k < 6; ++k) {
          double v = input.get((i * 5 + j) * 6 + k);
          s += v;
          m = v > m ? v : m;
        }
      }
      sum.set(j, s);
      max.set(j, m);
    }
    expect_same(run1(reduce_sum(x, {0, 2}), {input}), sum);
    expect_same(run1(reduce_max(x, {0, 2}), {input}), max);

    // Rows 1 and 3 get updates (row 3 twice, summed in double before rounding); 0, 2 and 4 don't.
    Value table = g.input("table", dtype, {5, 3});
    Value indices = g.input("indices", DType::i64, {3});
    Value updates = g.input("updates", dtype, {3, 3});
    Tensor t_table = special_tensor(rng, dtype, {5, 3});
    Tensor t_indices = Tensor::from_doubles(DType::i64, {3}, {3, 1, 3});
    Tensor t_updates = testing::random_tensor(rng, dtype, {3, 3}, -1, 1);
    std::vector<double> acc = t_table.to_doubles();
    for (int64_t u = 0; u < 9; ++u) {
      auto row = static_cast<int64_t>(t_indices.get(u / 3));
      acc[static_cast<size_t>(row * 3 + u % 3)] += t_updates.get(u);
    }
    Tensor expected = Tensor::from_doubles(dtype, {5, 3}, acc);
    Tensor actual = evaluate_reference(g, {scatter_add(table, indices, updates, 0)},
                                       {input, t_table, t_indices, t_updates})[0];
    expect_same(actual, expected);
  }
}

// The layout ops move elements of every size (1, 2, 4 and 8 bytes) through strided walks.
TEST(ReferenceTyped, LayoutOpsMoveEveryElementSize) {
  std::mt19937_64 rng(10);
  Shape shape = {2, 3, 4, 5};
  for (DType dtype : {DType::boolean, DType::bf16, DType::f32, DType::i64}) {
    SCOPED_TRACE(dtype_name(dtype));
    int64_t high = dtype == DType::boolean ? 2 : 100;
    Tensor input = testing::random_integers(rng, dtype, shape, 0, high);
    Graph g;
    Value x = g.input("x", dtype, shape);

    Axes perm = {3, 1, 0, 2};
    Tensor transposed(dtype, {5, 3, 2, 4});
    Tensor sliced(dtype, {1, 2, 2, 2});  // start (1, 0, 1, 0), stride (1, 2, 2, 3)
    Tensor padded(dtype, {3, 3, 6, 5});  // low (1, 0, 2, 0), high (0, 0, 0, 0), fill 1
    for (int64_t i = 0; i < padded.numel(); ++i) padded.set(i, 1);
    for (int64_t i = 0; i < input.numel(); ++i) {
      std::vector<int64_t> at = index_of(i, shape);
      std::vector<int64_t> t = {at[3], at[1], at[0], at[2]};
      transposed.set(offset_of(t, transposed.shape()), input.get(i));
      std::vector<int64_t> p = {at[0] + 1, at[1], at[2] + 2, at[3]};
      padded.set(offset_of(p, padded.shape()), input.get(i));
      if (at[0] == 1 && at[1] % 2 == 0 && at[2] % 2 == 1 && at[3] % 3 == 0) {
        std::vector<int64_t> s = {0, at[1] / 2, at[2] / 2, at[3] / 3};
        sliced.set(offset_of(s, sliced.shape()), input.get(i));
      }
    }
    expect_same(run1(transpose(x, perm), {input}), transposed);
    expect_same(run1(slice(x, {1, 0, 1, 0}, {2, 3, 4, 5}, {1, 2, 2, 3}), {input}), sliced);
    expect_same(run1(pad(x, {1, 0, 2, 0}, {0, 0, 0, 0}, 1.0), {input}), padded);

    // [2, 1, 4, 1] stretched along dims 1 and 3 and placed under a new leading dim.
    Value column = slice(x, {0, 0, 0, 0}, {2, 1, 4, 1});
    Tensor broadcast(dtype, {3, 2, 3, 4, 5});
    for (int64_t i = 0; i < broadcast.numel(); ++i) {
      std::vector<int64_t> at = index_of(i, broadcast.shape());
      broadcast.set(i, input.get(offset_of({at[1], 0, at[3], 0}, shape)));
    }
    Value stretched = broadcast_in_dim(column, {3, 2, 3, 4, 5}, {1, 2, 3, 4});
    expect_same(run1(stretched, {input}), broadcast);
  }
}

}  // namespace
}  // namespace kiln
