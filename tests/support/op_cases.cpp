// The op cases (see op_cases.h).
#include "support/op_cases.h"

#include <cmath>

#include "kiln/ir/ops.h"

namespace kiln::testing {
namespace {

const std::vector<DType> kFloat = {DType::f32, DType::f64, DType::bf16, DType::f16};
const std::vector<DType> kNumeric = {DType::f32, DType::f64, DType::bf16, DType::f16,
                                     DType::i32, DType::i64, DType::u32};
const std::vector<DType> kAll = {DType::f32, DType::f64, DType::bf16, DType::f16,
                                 DType::i32, DType::i64, DType::u32, DType::boolean};
const std::vector<DType> kBool = {DType::boolean};

OpCase unary_case(std::vector<DType> dtypes, Value (*op)(Value), double low = -2.0,
                  double high = 2.0) {
  return {dtypes, [=](Feeds& in, DType d) {
            Outputs out = {op(in.any(d, {7, 33}, low, high))};
            if (is_floating(d) && low < 0) out.push_back(op(in.with_nans(d, {5})));
            return out;
          }};
}

// Equal shapes, a broadcast operand, and (floating) NaNs in either operand.
OpCase binary_case(std::vector<DType> dtypes, Value (*op)(Value, Value)) {
  return {dtypes, [=](Feeds& in, DType d) {
            Value a = in.any(d, {6, 40}), b = in.any(d, {6, 40});
            Outputs out = {op(a, b), op(a, in.any(d, {40}))};
            if (is_floating(d)) {  // NaNs in either operand
              out.push_back(op(in.with_nans(d, {9}), in.any(d, {9})));
              out.push_back(op(in.any(d, {9}), in.with_nans(d, {9})));
            }
            return out;
          }};
}

Outputs constants(Feeds& in, DType d) {
  Value c = constant(in.graph(), random_tensor(in.rng(), d, {3, 4}));
  return {c, c + in.any(d, {3, 4})};
}

Outputs iotas(Feeds& in, DType d) {
  return {iota(in.graph(), d, {3, 4, 5}, 1), iota(in.graph(), d, {7}, 0)};
}

// One key per leading row, with high bits set and negative ones (random_bits' vector offset).
Value row_keys(Feeds& in, int64_t rows) {
  Tensor keys(DType::i64, {rows});
  for (int64_t r = 0; r < rows; ++r) keys.data_as<int64_t>()[r] = (r - 2) * 0x123456789AB + r;
  return in.tensor(keys);
}

// One key, and one per leading row: rows of 7 and 1001 elements (not multiples of 4, and longer
// than a block of the CPU's loop kernels) and of 400.
Outputs random_bits_case(Feeds& in, DType) {
  Value seed = in.scalar(DType::i64, -12345678901), offset = in.scalar(DType::i64, 77);
  return {random_bits(seed, offset, {5, 7}, 3), random_bits(seed, offset, {40001}, 0),
          random_bits(seed, row_keys(in, 5), {5, 7}, 3),
          random_bits(seed, row_keys(in, 3), {3, 4, 100}, 1),
          random_bits(seed, row_keys(in, 4), {4, 1001}, 2)};
}

// Integer divisors in [1, 5) with random signs (u32 stays positive).
Outputs divisions(Feeds& in, DType d) {
  Value a = in.any(d, {6, 40});
  if (is_floating(d)) return {a / in.any(d, {6, 40}), a / in.any(d, {40})};
  Value b = in.integers(d, {6, 40}, 1, 5);
  if (d == DType::u32) return {a / b};
  return {a / (b * (in.integers(d, {6, 40}, 0, 2) * 2.0 - 1.0))};
}

Outputs powers(Feeds& in, DType d) {
  if (!is_floating(d)) return {pow(in.integers(d, {50}, 0, 4), in.integers(d, {50}, 0, 6))};
  return {pow(in.any(d, {50}, 0.5, 2.0), in.any(d, {50}))};
}

// Small integers in every dtype, so that ties occur; NaNs for the floating ones.
Outputs comparisons(Feeds& in, DType d) {
  auto values = [&] { return d == DType::boolean ? in.any(d, {60}) : in.integers(d, {60}, 0, 3); };
  Value a = values(), b = values();
  Outputs out;
  for (CompareDir dir : {CompareDir::eq, CompareDir::ne, CompareDir::lt, CompareDir::le,
                         CompareDir::gt, CompareDir::ge}) {
    out.push_back(compare(a, b, dir));
    if (is_floating(d)) out.push_back(compare(in.with_nans(d, {6}), in.any(d, {6}), dir));
  }
  return out;
}

Outputs selects(Feeds& in, DType d) {
  return {select(in.any(DType::boolean, {5, 30}), in.any(d, {5, 30}), in.any(d, {30}))};
}

// To every other dtype; the range saturates the narrow integers, NaN goes to 0.
Outputs casts(Feeds& in, DType d) {
  Value x = in.any(d, {40}, -300.0, 300.0);
  Outputs out;
  for (DType to : kAll) {
    if (to != d) out.push_back(cast(x, to));
  }
  if (is_floating(d)) out.push_back(cast(in.with_nans(d, {6}), DType::i32));
  return out;
}

Outputs broadcasts(Feeds& in, DType d) {
  return {broadcast_in_dim(in.any(d, {3, 1}), {2, 3, 4}, {1, 2}),
          broadcast_in_dim(in.any(d, {5}), {5, 3000}, {0})};
}

// A kernel's result seen through two shapes, and an argument through a reshape.
Outputs reshapes(Feeds& in, DType d) {
  Value x = in.any(d, {3, 4});
  if (d == DType::boolean) return {reshape(x, {2, 6})};
  Value y = x + x;
  return {reshape(y, {2, 6}), y, reshape(x, {12})};
}

Outputs transposes(Feeds& in, DType d) {
  return {transpose(in.any(d, {3, 4, 5}), {2, 0, 1}),
          transpose(in.any(d, {2, 3, 4, 5}), {0, 2, 1, 3}),
          transpose(in.any(d, {40, 50}), {1, 0}),  // tile by tile
          transpose(in.any(d, {3, 33, 2, 70}), {0, 3, 2, 1})};
}

Outputs slices(Feeds& in, DType d) {
  Value x = in.any(d, {6, 7, 5});
  return {slice(x, {1, 0, 2}, {6, 7, 5}, {2, 3, 1}), slice(x, {0, 2, 0}, {6, 4, 5})};
}

Outputs concats(Feeds& in, DType d) {
  Value a = in.any(d, {2, 3}), b = in.any(d, {2, 1}), c = in.any(d, {2, 4});
  return {concat({a, b, c}, 1), concat({a, a}, 0)};
}

Outputs pads(Feeds& in, DType d) { return {pad(in.any(d, {3, 4}), {1, 0}, {2, 3}, 1.0)}; }

// Every axis set of a rank-3 input, keepdims, patterns that need a transpose first, long rows
// and long columns, and NaNs.
Outputs reductions(Feeds& in, DType d, Value (*op)(Value, const Axes&, bool)) {
  Value x = in.any(d, {4, 5, 6});
  Outputs out;
  for (const Axes& axes : std::vector<Axes>{{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}, {}}) {
    out.push_back(op(x, axes, false));
  }
  out.push_back(op(x, {1}, true));
  Value y = in.any(d, {2, 3, 4, 5});
  out.push_back(op(y, {0, 2}, false));
  out.push_back(op(y, {1, 3}, false));
  out.push_back(op(in.any(d, {3, 1000}), {1}, false));
  out.push_back(op(in.any(d, {700, 3}), {0}, false));
  if (is_floating(d)) out.push_back(op(in.with_nans(d, {4, 6}), {1}, false));
  return out;
}

// A batched product, and half/f32 operands into wider outputs (cpu_dot_test has the layouts).
Outputs dots(Feeds& in, DType d) {
  Value a = in.any(d, {2, 3, 4}), b = in.any(d, {2, 4, 5});
  Outputs out = {matmul(a, b)};
  if (is_floating(d) && d != DType::f64) {
    DotAttrs batched{{0}, {0}, {2}, {1}};
    out.push_back(dot_general(a, b, batched, DType::f32));
    out.push_back(dot_general(a, b, batched, DType::f64));
  }
  return out;
}

Outputs gathers(Feeds& in, DType d) {
  Value x = in.any(d, {5, 4, 3});
  return {gather(x, in.integers(DType::i32, {2, 3}, 0, 5), 0),
          gather(x, in.integers(DType::i64, {6}, 0, 4), 1)};
}

// Duplicate indices accumulate; the last, embedding-like (300 rows into 6, 40 wide), spans the
// CPU kernel's column blocks (16 wide) and outer slices, split across its threads.
Outputs scatters(Feeds& in, DType d) {
  Value x = in.any(d, {5, 3});
  Value rows = in.integers(DType::i32, {8}, 0, 5), cols = in.integers(DType::i64, {2, 2}, 0, 3);
  return {scatter_add(x, rows, in.any(d, {8, 3}), 0),
          scatter_add(x, cols, in.any(d, {5, 2, 2}), 1),
          scatter_add(in.any(d, {2, 6, 40}), in.integers(DType::i32, {300}, 0, 6),
                      in.any(d, {2, 300, 40}), 1)};
}

Outputs softmaxes(Feeds& in, DType d) {
  Value x = in.any(d, {3, 4, 50}, -8.0, 8.0);
  Value long_rows = in.any(d, {2, 1200}, -30.0, 30.0);  // sums over several blocks
  Value nans = in.with_nans(d, {4, 5});                  // every row holds a NaN
  return {softmax(x, -1),         softmax(x, 1),         log_softmax(x, -1),
          log_softmax(x, 0),      softmax(long_rows, 1), log_softmax(long_rows, 1),
          softmax(nans, 1),       log_softmax(nans, 1)};
}

Outputs layer_norms(Feeds& in, DType d) {
  return {layer_norm(in.any(d, {3, 4, 48}), in.any(d, {48}), in.any(d, {48}), 1e-5)};
}

// Rows of 48 and of 1000 (a row longer than the CPU kernels' 32 partial sums, with a remainder);
// and 300 rows, which the CPU kernel splits across its threads and sums 16 rows at a time.
Outputs layer_norm_gradients(Feeds& in, DType d) {
  Outputs out;
  for (Shape shape : {Shape{3, 4, 48}, Shape{3, 4, 1000}, Shape{3, 100, 40}}) {
    Value x = in.any(d, shape), dy = in.any(d, shape);
    out.push_back(layer_norm_grads(x, in.any(d, {shape.back()}), dy, 1e-5));
  }
  return out;
}

Outputs gelus(Feeds& in, DType d) { return {gelu(in.any(d, {7, 33}, -4.0, 4.0))}; }

Outputs gelu_grads(Feeds& in, DType d) {
  Value x = in.any(d, {7, 33}, -4.0, 4.0);
  return {gelu_grad(x, in.any(d, {7, 33})), gelu_grad(in.with_nans(d, {5}), in.any(d, {5}))};
}

// i64 labels with one ignored row, and i32 labels.
Outputs cross_entropies(Feeds& in, DType d) {
  Value logits = in.any(d, {6, 10}, -4.0, 4.0);
  Tensor labels = Tensor::from_doubles(DType::i64, {6}, {3, -100, 0, 9, 9, 4});
  return {cross_entropy(logits, constant(in.graph(), labels)),
          cross_entropy(logits, in.integers(DType::i32, {6}, 0, 10))};
}

// Shapes for attention: small ones with a full-size mask; ones past the fused kernels' 64-row
// blocks (a tail of queries and of keys) with a per-batch padding mask of f32 whatever the
// operands' dtype, and dropout keyed per batch row; ones without batch dims, with dropout; and
// the first two again seq_first ([B, S, H, D], as multi_head_attention lays them out).
struct AttentionOperands {
  Value q, k, v, mask;
  AttentionDropout dropout;
  AttentionLayout layout = AttentionLayout::heads_first;
};

std::vector<AttentionOperands> attention_operands(Feeds& in, DType d) {
  AttentionOperands small{in.any(d, {2, 3, 4, 8}), in.any(d, {2, 3, 5, 8}),
                          in.any(d, {2, 3, 5, 6}), in.any(d, {2, 1, 4, 5}), {}};
  Value seed = in.scalar(DType::i64, 42);
  Value offset = in.integers(DType::i64, {2}, 0, 5);
  AttentionOperands blocked{in.any(d, {2, 2, 67, 16}), in.any(d, {2, 2, 70, 16}),
                            in.any(d, {2, 2, 70, 12}), in.any(DType::f32, {2, 1, 1, 70}, -3, 0),
                            {seed, offset, 0.25, 5}};
  // Without batch dims the scores' leading rows are the queries: a key per query row.
  AttentionOperands unbatched{in.any(d, {5, 8}), in.any(d, {6, 8}), in.any(d, {6, 4}),
                              in.any(d, {5, 6}, -3, 0), {seed, in.integers(DType::i64, {5}, 0, 9),
                                                         0.4, 1}};
  AttentionOperands small_seq_first{in.any(d, {2, 4, 3, 8}), in.any(d, {2, 5, 3, 8}),
                                    in.any(d, {2, 5, 3, 6}), in.any(d, {2, 1, 4, 5}), {},
                                    AttentionLayout::seq_first};
  AttentionOperands blocked_seq_first{in.any(d, {2, 67, 2, 16}), in.any(d, {2, 70, 2, 16}),
                                      in.any(d, {2, 70, 2, 12}),
                                      in.any(DType::f32, {2, 1, 1, 70}, -3, 0),
                                      {seed, offset, 0.25, 5}, AttentionLayout::seq_first};
  return {small, blocked, unbatched, small_seq_first, blocked_seq_first};
}

Outputs attentions(Feeds& in, DType d) {
  Outputs out;
  for (const AttentionOperands& a : attention_operands(in, d)) {
    out.push_back(attention(a.q, a.k, a.v, a.mask, 0.35, a.dropout, std::nullopt, a.layout));
  }
  return out;
}

// With out = attention(...) and a random cotangent in [-0.25, 0.25): bf16's absolute tolerance
// then covers the bf16 rounding of the score gradients before their products (a decomposition
// rounds them as the kernel does, the reference does not).
Outputs attention_grads(Feeds& in, DType d) {
  Outputs grads;
  for (const AttentionOperands& a : attention_operands(in, d)) {
    Value out = attention(a.q, a.k, a.v, a.mask, 0.35, a.dropout, std::nullopt, a.layout);
    Value dout = in.any(d, out.shape(), -0.25, 0.25);
    grads.push_back(attention_grad(a.q, a.k, a.v, a.mask, out, dout, 0.35, a.dropout,
                                   std::nullopt, a.layout));
  }
  return grads;
}

Outputs dropouts(Feeds& in, DType d) {
  Value seed = in.scalar(DType::i64, 42), offset = in.scalar(DType::i64, 3);
  return {dropout(in.any(d, {5, 4001}), seed, offset, 0.3, 2),
          dropout(in.any(d, {6, 3, 7}), seed, row_keys(in, 6), 0.3, 4)};
}

// Alone and between elementwise ops (a fused loop on either side); NaNs pass through.
Outputs all_reduces(Feeds& in, DType d) {
  Value a = in.any(d, {6, 40});
  Outputs out = {all_reduce(a), all_reduce(a + a) * a};
  if (is_floating(d)) out.push_back(all_reduce(in.with_nans(d, {9})));
  return out;
}

}  // namespace

std::map<OpKind, OpCase> op_cases() {
  auto sums = [](Feeds& in, DType d) { return reductions(in, d, reduce_sum); };
  auto maxes = [](Feeds& in, DType d) { return reductions(in, d, reduce_max); };
  return {
      {OpKind::input, {kAll, [](Feeds& in, DType d) { return Outputs{in.any(d, {3, 4})}; }}},
      {OpKind::constant, {kNumeric, constants}},
      {OpKind::iota, {kNumeric, iotas}},
      {OpKind::random_bits, {{DType::u32}, random_bits_case}},
      {OpKind::neg, unary_case(kNumeric, neg)},
      {OpKind::abs, unary_case(kNumeric, abs)},
      {OpKind::sign, unary_case(kNumeric, sign)},
      {OpKind::exp, unary_case(kFloat, exp, -90.0, 90.0)},  // past under- and overflow
      {OpKind::log, unary_case(kFloat, log, 0.05, 4.0)},
      {OpKind::tanh, unary_case(kFloat, tanh)},
      {OpKind::logistic, unary_case(kFloat, logistic)},
      {OpKind::sqrt, unary_case(kFloat, sqrt, 0.0, 4.0)},
      {OpKind::rsqrt, unary_case(kFloat, rsqrt, 0.05, 4.0)},
      {OpKind::erf, unary_case(kFloat, erf, -5.0, 5.0)},
      {OpKind::logical_not, unary_case(kBool, logical_not)},
      {OpKind::add, binary_case(kNumeric, add)},
      {OpKind::sub, binary_case(kNumeric, sub)},
      {OpKind::mul, binary_case(kNumeric, mul)},
      {OpKind::div, {kNumeric, divisions}},
      {OpKind::max, binary_case(kNumeric, max)},
      {OpKind::min, binary_case(kNumeric, min)},
      {OpKind::pow, {kNumeric, powers}},
      {OpKind::logical_and, binary_case(kBool, logical_and)},
      {OpKind::logical_or, binary_case(kBool, logical_or)},
      {OpKind::compare, {kAll, comparisons}},
      {OpKind::select, {kAll, selects}},
      {OpKind::cast, {kAll, casts}},
      {OpKind::broadcast, {kAll, broadcasts}},
      {OpKind::reshape, {kAll, reshapes}},
      {OpKind::transpose, {kAll, transposes}},
      {OpKind::slice, {kAll, slices}},
      {OpKind::concat, {kAll, concats}},
      {OpKind::pad, {kAll, pads}},
      {OpKind::reduce_sum, {kNumeric, sums}},
      {OpKind::reduce_max, {kNumeric, maxes}},
      {OpKind::dot_general, {kNumeric, dots}},
      {OpKind::gather, {kAll, gathers}},
      {OpKind::scatter_add, {kNumeric, scatters}},
      {OpKind::softmax, {kFloat, softmaxes}},
      {OpKind::log_softmax, {kFloat, softmaxes}},
      {OpKind::layer_norm, {kFloat, layer_norms}},
      {OpKind::layer_norm_grads, {kFloat, layer_norm_gradients}},
      {OpKind::gelu, {kFloat, gelus}},
      {OpKind::gelu_grad, {kFloat, gelu_grads}},
      {OpKind::cross_entropy, {kFloat, cross_entropies}},
      {OpKind::attention, {kFloat, attentions}},
      {OpKind::attention_grad, {kFloat, attention_grads}},
      {OpKind::dropout, {kFloat, dropouts}},
      {OpKind::all_reduce, {kNumeric, all_reduces}},
  };
}

std::vector<OpKind> all_ops() {
  return {
#define KILN_OP_KIND(name, category, gradient) OpKind::name,
      KILN_OPS(KILN_OP_KIND)
#undef KILN_OP_KIND
  };
}

}  // namespace kiln::testing
