// Reverse-mode autodiff: the structure of the backward graph (types, zeros, integer paths,
// accumulation, composites, missing rules, scalar losses) and small values from the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kiln/autodiff/grad.h"
#include "kiln/autodiff/grad_internal.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::error_of;

Tensor f64s(const Shape& shape, const std::vector<double>& values) {
  return Tensor::from_doubles(DType::f64, shape, values);
}

// The registry's rules, except the one for `hidden`.
autodiff_internal::VjpLookup hiding(OpKind hidden) {
  return [hidden](OpKind kind) -> VjpRule {
    return kind == hidden ? nullptr : autodiff_internal::registry_vjp(kind);
  };
}

TEST(Grad, GradientsHaveTheShapeAndDtypeOfWrt) {
  Graph g;
  Value x = g.input("x", DType::f32, {3, 4});
  Value w = g.input("w", DType::f32, {4, 2});
  Value b = g.input("b", DType::bf16, {2});
  Value loss = reduce_sum(matmul(x, w) * 2.0 + cast(b, DType::f32));
  std::vector<Value> grads = grad(loss, {w, x, b});
  ASSERT_EQ(grads.size(), 3u);
  EXPECT_EQ(grads[0].shape(), (Shape{4, 2}));
  EXPECT_EQ(grads[0].dtype(), DType::f32);
  EXPECT_EQ(grads[1].shape(), (Shape{3, 4}));
  EXPECT_EQ(grads[2].shape(), (Shape{2}));
  EXPECT_EQ(grads[2].dtype(), DType::bf16);
}

TEST(Grad, MatmulValues) {
  Graph g;
  Value x = g.input("x", DType::f64, {1, 2});
  Value w = g.input("w", DType::f64, {2, 2});
  Value loss = reduce_sum(matmul(x, w));
  std::vector<Value> grads = grad(loss, {x, w});
  std::vector<Tensor> out =
      evaluate_reference(g, grads, {f64s({1, 2}, {1, 2}), f64s({2, 2}, {1, 2, 3, 4})});
  EXPECT_ALLCLOSE(out[0], f64s({1, 2}, {3, 7}), 0, 0);        // row sums of w
  EXPECT_ALLCLOSE(out[1], f64s({2, 2}, {1, 1, 2, 2}), 0, 0);  // x[i] for every column
}

// bf16 operands with an f32 product: the cotangent is cast down, the gradients come back bf16.
TEST(Grad, MixedPrecisionDotGeneral) {
  Graph g;
  Value a = g.input("a", DType::bf16, {2, 3});  // [k, m]
  Value b = g.input("b", DType::bf16, {2});     // [k]
  Value out = dot_general(a, b, DotAttrs{{}, {}, {0}, {0}}, DType::f32);
  Value loss = reduce_sum(out * out);
  std::vector<Value> grads = grad(loss, {a, b});
  EXPECT_EQ(grads[0].dtype(), DType::bf16);
  EXPECT_EQ(grads[1].dtype(), DType::bf16);
  std::vector<Tensor> result =
      evaluate_reference(g, grads,
                         {Tensor::from_doubles(DType::bf16, {2, 3}, {1, 2, 3, 4, 5, 6}),
                          Tensor::from_doubles(DType::bf16, {2}, {1, -1})});
  // out = (-3, -3, -3); da[k, m] = 2 out[m] b[k]; db[k] = sum_m 2 out[m] a[k, m].
  Tensor expected_a = Tensor::from_doubles(DType::bf16, {2, 3}, {-6, -6, -6, 6, 6, 6});
  EXPECT_ALLCLOSE(result[0], expected_a, 0, 0);
  EXPECT_ALLCLOSE(result[1], Tensor::from_doubles(DType::bf16, {2}, {-36, -90}), 0, 0);
}

TEST(Grad, UnrelatedWrtGetsZeros) {
  Graph g;
  Value x = g.input("x", DType::f64, {3});
  Value unrelated = g.input("unrelated", DType::f64, {2, 2});
  Value loss = reduce_sum(x * x);
  std::vector<Value> grads = grad(loss, {unrelated, x});
  EXPECT_EQ(grads[0].shape(), (Shape{2, 2}));
  std::vector<Tensor> out =
      evaluate_reference(g, grads, {f64s({3}, {1, 2, 3}), f64s({2, 2}, {5, 6, 7, 8})});
  EXPECT_ALLCLOSE(out[0], f64s({2, 2}, {0, 0, 0, 0}), 0, 0);
  EXPECT_ALLCLOSE(out[1], f64s({3}, {2, 4, 6}), 0, 0);
}

// Through a cast to i32 nothing flows, and nodes on integer or bool paths need no rule: the casts
// and the compare (which has none) are never asked for one.
TEST(Grad, IntegerPathsCarryNoGradient) {
  Graph g;
  Value x = g.input("x", DType::f64, {3});
  Value through_int = cast(cast(x, DType::i32), DType::f64);
  Value loss = reduce_sum(through_int + select(gt(x, scalar_like(x, 0.0)), x, x * 2.0));
  std::vector<Value> grads = autodiff_internal::grad_with(loss, {x}, hiding(OpKind::cast));
  std::vector<Tensor> out = evaluate_reference(g, grads, {f64s({3}, {1.5, -2.5, 3.0})});
  EXPECT_ALLCLOSE(out[0], f64s({3}, {1, 2, 1}), 0, 0);

  Value only_int = reduce_sum(through_int);
  std::vector<Tensor> zeros = evaluate_reference(g, grad(only_int, {x}), {f64s({3}, {1, 2, 3})});
  EXPECT_ALLCLOSE(zeros[0], f64s({3}, {0, 0, 0}), 0, 0);
}

TEST(Grad, CotangentsReachingANodeTwiceAreSummed) {
  Graph g;
  Value x = g.input("x", DType::f64, {2});
  Value y = x * 3.0;
  Value loss = reduce_sum(y) + reduce_sum(y * y);  // y used three times
  std::vector<Value> grads = grad(loss, {x});
  std::vector<Tensor> out = evaluate_reference(g, grads, {f64s({2}, {1, 2})});
  // d/dx (3x + 9x^2) = 3 + 18x
  EXPECT_ALLCLOSE(out[0], f64s({2}, {21, 39}), 0, 0);
}

TEST(Grad, IntermediateWrtAndRepeatedWrt) {
  Graph g;
  Value x = g.input("x", DType::f64, {2});
  Value y = x * 2.0;
  Value loss = reduce_sum(y * y);
  std::vector<Value> grads = grad(loss, {y, x, x});
  std::vector<Tensor> out = evaluate_reference(g, grads, {f64s({2}, {1, -3})});
  EXPECT_ALLCLOSE(out[0], f64s({2}, {4, -12}), 0, 0);  // 2y
  EXPECT_ALLCLOSE(out[1], f64s({2}, {8, -24}), 0, 0);  // 8x
  EXPECT_ALLCLOSE(out[2], out[1], 0, 0);
}

TEST(Grad, ThroughACompositeUsesItsDecomposition) {
  Graph g;
  Value x = g.input("x", DType::f64, {3});
  Value c = g.input("c", DType::f64, {3});
  Value loss = reduce_sum(log_softmax(x) * c);
  int32_t forward_end = g.size();
  std::vector<Value> grads = grad(loss, {x});
  bool has_log_softmax = false;
  for (int32_t id : live_nodes(g, grads)) {
    EXPECT_TRUE(id < forward_end || op_info(g.node(id).op).category != OpCategory::composite)
        << "backward node %" << id << " is " << op_name(g.node(id).op);
    has_log_softmax = has_log_softmax || g.node(id).op == OpKind::log_softmax;
  }
  EXPECT_FALSE(has_log_softmax);  // the gradient needs only the decomposition's values

  std::vector<double> xs = {0.5, -1.0, 2.0}, cs = {1.0, 2.0, -1.0};
  std::vector<Tensor> out = evaluate_reference(g, grads, {f64s({3}, xs), f64s({3}, cs)});
  double total = 0, weights = 0;
  for (double v : xs) total += std::exp(v);
  for (double v : cs) weights += v;
  std::vector<double> expected;
  for (size_t i = 0; i < 3; ++i) expected.push_back(cs[i] - std::exp(xs[i]) / total * weights);
  EXPECT_ALLCLOSE(out[0], f64s({3}, expected), 1e-12, 1e-14);
}

// Softmax's own rule reads the forward softmax: no max or exp is rebuilt in the backward pass.
TEST(Grad, SoftmaxReusesItsOutput) {
  Graph g;
  Value x = g.input("x", DType::f64, {3});
  Value c = g.input("c", DType::f64, {3});
  Value probs = softmax(x);
  Value loss = reduce_sum(probs * c);
  int32_t forward_end = g.size();
  std::vector<Value> grads = grad(loss, {x});
  bool reads_probs = false;
  for (int32_t id : live_nodes(g, grads)) {
    const Node& node = g.node(id);
    if (id < forward_end) continue;
    EXPECT_NE(node.op, OpKind::exp) << "backward node %" << id;
    EXPECT_NE(node.op, OpKind::reduce_max) << "backward node %" << id;
    for (int32_t operand : node.inputs) reads_probs = reads_probs || operand == probs.id();
  }
  EXPECT_TRUE(reads_probs);

  std::vector<double> xs = {0.5, -1.0, 2.0}, cs = {1.0, 2.0, -1.0};
  std::vector<Tensor> out = evaluate_reference(g, grads, {f64s({3}, xs), f64s({3}, cs)});
  double total = 0, weighted = 0;
  for (double v : xs) total += std::exp(v);
  for (size_t i = 0; i < 3; ++i) weighted += std::exp(xs[i]) / total * cs[i];
  std::vector<double> expected;
  for (size_t i = 0; i < 3; ++i) expected.push_back(std::exp(xs[i]) / total * (cs[i] - weighted));
  EXPECT_ALLCLOSE(out[0], f64s({3}, expected), 1e-12, 1e-14);
}

// A composite that uses one value twice (gamma as beta too) gets its total once, not twice.
TEST(Grad, CompositeWithARepeatedOperand) {
  Graph g;
  Value x = g.input("x", DType::f64, {2, 2});
  Value gamma = g.input("gamma", DType::f64, {2});
  Value loss = reduce_sum(layer_norm(x, gamma, gamma, 0.0));
  std::vector<Tensor> out =
      evaluate_reference(g, grad(loss, {gamma}), {f64s({2, 2}, {1, 3, 5, 4}), f64s({2}, {0.5, 2})});
  // Each row normalises to (-1, 1) or (1, -1): d/dgamma_j = sum_n (xhat_nj + 1).
  EXPECT_ALLCLOSE(out[0], f64s({2}, {2, 2}), 1e-12, 1e-12);
}

TEST(Grad, MissingRuleIsAnErrorNamingOpAndNode) {
  Graph g;
  Value x = g.input("x", DType::f32, {3});
  Value w = g.input("w", DType::f32, {3});
  Value t = tanh(x * w);
  ASSERT_EQ(t.id(), 3);
  Value loss = reduce_sum(t);
  EXPECT_EQ(error_of([&] { autodiff_internal::grad_with(loss, {x}, hiding(OpKind::tanh)); }),
            "[autodiff] no VJP rule for op 'tanh' (node %3)");
  // The same graph differentiates with the registry's rules.
  EXPECT_EQ(grad(loss, {x})[0].shape(), (Shape{3}));
}

TEST(Grad, MissingRuleInsideADecomposition) {
  Graph g;
  Value x = g.input("x", DType::f64, {3});
  Value loss = reduce_sum(log_softmax(x) * x);
  std::string message =
      error_of([&] { autodiff_internal::grad_with(loss, {x}, hiding(OpKind::exp)); });
  EXPECT_EQ(message.rfind("[autodiff] no VJP rule for op 'exp' (node %", 0), 0u) << message;
}

TEST(Grad, MissingRuleOffThePathIsFine) {
  Graph g;
  Value x = g.input("x", DType::f64, {2});
  Value c = g.input("c", DType::f64, {2});
  Value loss = reduce_sum(tanh(c) * x);
  std::vector<Value> grads = autodiff_internal::grad_with(loss, {x}, hiding(OpKind::tanh));
  std::vector<Tensor> out = evaluate_reference(g, grads, {f64s({2}, {1, 2}), f64s({2}, {0, 1})});
  EXPECT_ALLCLOSE(out[0], f64s({2}, {0, std::tanh(1.0)}), 1e-15, 0);
}

TEST(Grad, LossMustBeAFloatingScalar) {
  Graph g;
  Value x = g.input("x", DType::f32, {3, 4});
  EXPECT_EQ(error_of([&] { grad(reduce_sum(x, {0}), {x}); }),
            "[autodiff] grad needs a floating scalar loss, got f32(4)");
  Value n = g.input("n", DType::i32, {});
  EXPECT_EQ(error_of([&] { grad(n, {x}); }),
            "[autodiff] grad needs a floating scalar loss, got i32()");
}

TEST(Grad, WrtMustBeFloating) {
  Graph g;
  Value x = g.input("x", DType::f32, {3});
  Value n = g.input("n", DType::i32, {3});
  Value loss = reduce_sum(x * cast(n, DType::f32));
  EXPECT_EQ(error_of([&] { grad(loss, {n}); }),
            "[autodiff] wrt %1 is i32(3): only floating values have gradients");
}

TEST(Vjp, PullsGivenCotangentsBack) {
  Graph g;
  Value x = g.input("x", DType::f64, {2});
  Value seed = g.input("seed", DType::f64, {2});
  Value y = x * x;
  Value z = exp(x);
  std::vector<Value> grads = vjp({y, z}, {seed, seed * 2.0}, {x});
  std::vector<Tensor> out = evaluate_reference(g, grads, {f64s({2}, {1, 2}), f64s({2}, {1, -1})});
  // seed * 2x + 2 seed * e^x
  EXPECT_ALLCLOSE(out[0], f64s({2}, {2 + 2 * std::exp(1.0), -4 - 2 * std::exp(2.0)}), 1e-14, 0);
  EXPECT_EQ(error_of([&] { vjp({y}, {seed, seed}, {x}); }),
            "[autodiff] 1 outputs but 2 cotangents");
  Value wrong = g.input("wrong", DType::f64, {3});
  EXPECT_EQ(error_of([&] { vjp({y}, {wrong}, {x}); }),
            "[autodiff] cotangent f64(3) for output %" + std::to_string(y.id()) + " f64(2)");
}

}  // namespace
}  // namespace kiln
