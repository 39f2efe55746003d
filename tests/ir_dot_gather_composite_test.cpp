// Builders of dot_general, matmul, gather, scatter_add and the composites: shapes, dtypes,
// attributes, error texts; and the composites' decompositions (core ops only, same values as the
// reference kernels of the composite nodes).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "kiln/autodiff/grad.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/error.h"
#include "kiln/ir/op_registry.h"
#include "kiln/ir/ops.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::error_of;

// ---- dot_general ----

TEST(DotGeneral, OutputIsBatchThenLhsFreeThenRhsFree) {
  Graph g;
  Value lhs = g.input("lhs", DType::f32, {3, 2, 4});  // [k, b, m]
  Value rhs = g.input("rhs", DType::f32, {2, 5, 3});  // [b, n, k]
  Value out = dot_general(lhs, rhs, DotAttrs{{1}, {0}, {0}, {2}});
  EXPECT_EQ(out.op(), OpKind::dot_general);
  EXPECT_EQ(out.shape(), (Shape{2, 4, 5}));
  EXPECT_EQ(out.dtype(), DType::f32);
}

TEST(DotGeneral, NegativeDimsAreNormalisedInTheAttributes) {
  Graph g;
  Value lhs = g.input("lhs", DType::f64, {4, 3});
  Value rhs = g.input("rhs", DType::f64, {3, 5});
  Value out = dot_general(lhs, rhs, DotAttrs{{}, {}, {-1}, {-2}});
  EXPECT_EQ(out.shape(), (Shape{4, 5}));
  EXPECT_EQ(out.node().attr<DotAttrs>().lhs_contract, (Axes{1}));
  EXPECT_EQ(out.node().attr<DotAttrs>().rhs_contract, (Axes{0}));
}

TEST(DotGeneral, OutDtypeMayWidenFloatingOperands) {
  Graph g;
  Value lhs = g.input("lhs", DType::bf16, {4, 3});
  Value rhs = g.input("rhs", DType::bf16, {3, 5});
  EXPECT_EQ(dot_general(lhs, rhs, DotAttrs{{}, {}, {1}, {0}}, DType::f32).dtype(), DType::f32);
  EXPECT_EQ(dot_general(lhs, rhs, DotAttrs{{}, {}, {1}, {0}}).dtype(), DType::bf16);
  Value ints = g.input("ints", DType::i32, {3, 3});
  EXPECT_EQ(error_of([&] { dot_general(ints, ints, DotAttrs{{}, {}, {1}, {0}}, DType::f32); }),
            "[dot_general] output dtype f32 for i32 operands");
}

TEST(DotGeneral, ContractingMismatchNamesShapesAndSizes) {
  Graph g;
  Value lhs = g.input("lhs", DType::f32, {4, 3});
  Value rhs = g.input("rhs", DType::f32, {5, 2});
  EXPECT_EQ(error_of([&] { dot_general(lhs, rhs, DotAttrs{{}, {}, {1}, {0}}); }),
            "[dot_general] lhs (4,3) and rhs (5,2): contracting dims 3 vs 5");
}

TEST(DotGeneral, RejectsBadDims) {
  Graph g;
  Value lhs = g.input("lhs", DType::f32, {2, 4, 3});
  Value rhs = g.input("rhs", DType::f32, {3, 3, 5});
  EXPECT_EQ(error_of([&] { dot_general(lhs, rhs, DotAttrs{{0}, {0}, {2}, {1}}); }),
            "[dot_general] lhs (2,4,3) and rhs (3,3,5): batch dims 2 vs 3");
  EXPECT_EQ(error_of([&] { dot_general(lhs, rhs, DotAttrs{{0}, {}, {2}, {1}}); }),
            "[dot_general] lhs (2,4,3) and rhs (3,3,5): 1 vs 0 batch dims");
  EXPECT_EQ(error_of([&] { dot_general(lhs, rhs, DotAttrs{{}, {}, {2, 1}, {1}}); }),
            "[dot_general] lhs (2,4,3) and rhs (3,3,5): 2 vs 1 contracting dims");
  EXPECT_EQ(error_of([&] { dot_general(lhs, rhs, DotAttrs{{2}, {0}, {2}, {1}}); }),
            "[dot_general] lhs (2,4,3): dim 2 used twice");
  EXPECT_EQ(error_of([&] { dot_general(lhs, rhs, DotAttrs{{}, {}, {2}, {3}}); }),
            "[dot_general] rhs (3,3,5): dim 3 out of range for rank 3");
  Value f64 = g.input("f64", DType::f64, {3, 5});
  EXPECT_EQ(error_of([&] { dot_general(lhs, f64, DotAttrs{{}, {}, {2}, {0}}); }),
            "[dot_general] dtype mismatch: f32 vs f64");
}

// ---- matmul ----

TEST(Matmul, Rank2IsOneDotGeneral) {
  Graph g;
  Value a = g.input("a", DType::f32, {4, 3});
  Value b = g.input("b", DType::f32, {3, 5});
  Value out = matmul(a, b);
  EXPECT_EQ(out.shape(), (Shape{4, 5}));
  EXPECT_EQ(out.op(), OpKind::dot_general);
  EXPECT_EQ(out.node().inputs, (std::vector<int32_t>{a.id(), b.id()}));
  EXPECT_EQ(out.node().attr<DotAttrs>().lhs_contract, (Axes{1}));
  EXPECT_EQ(out.node().attr<DotAttrs>().rhs_contract, (Axes{0}));
}

TEST(Matmul, Rank2RhsIsSharedWithoutBroadcast) {
  Graph g;
  Value a = g.input("a", DType::f32, {2, 7, 4, 3});
  Value b = g.input("b", DType::f32, {3, 5});
  Value out = matmul(a, b);
  EXPECT_EQ(out.shape(), (Shape{2, 7, 4, 5}));
  EXPECT_EQ(out.op(), OpKind::dot_general);
  EXPECT_EQ(out.node().inputs, (std::vector<int32_t>{a.id(), b.id()}));
  for (int32_t id : live_nodes(g, {out})) EXPECT_NE(g.node(id).op, OpKind::broadcast);
}

TEST(Matmul, EqualBatchDimsAreBatchDims) {
  Graph g;
  Value a = g.input("a", DType::f32, {2, 4, 3});
  Value b = g.input("b", DType::f32, {2, 3, 5});
  Value out = matmul(a, b);
  EXPECT_EQ(out.shape(), (Shape{2, 4, 5}));
  EXPECT_EQ(out.node().inputs, (std::vector<int32_t>{a.id(), b.id()}));
  const auto& dims = out.node().attr<DotAttrs>();
  EXPECT_EQ(dims.lhs_batch, (Axes{0}));
  EXPECT_EQ(dims.rhs_batch, (Axes{0}));
  EXPECT_EQ(dims.lhs_contract, (Axes{2}));
  EXPECT_EQ(dims.rhs_contract, (Axes{1}));
}

TEST(Matmul, BatchDimsBroadcastNumpyStyle) {
  Graph g;
  Value a = g.input("a", DType::f64, {2, 1, 4, 3});
  Value b = g.input("b", DType::f64, {3, 3, 5});
  Value out = matmul(a, b);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 4, 5}));
  Value lhs = g.value(out.node().inputs[0]);
  Value rhs = g.value(out.node().inputs[1]);
  EXPECT_EQ(lhs.op(), OpKind::broadcast);
  EXPECT_EQ(lhs.shape(), (Shape{2, 3, 4, 3}));
  EXPECT_EQ(rhs.op(), OpKind::broadcast);
  EXPECT_EQ(rhs.shape(), (Shape{2, 3, 3, 5}));
  EXPECT_EQ(out.node().attr<DotAttrs>().lhs_batch, (Axes{0, 1}));
}

TEST(Matmul, BroadcastBatchComputesPerBatchProducts) {
  Graph g;
  Value a = g.input("a", DType::f64, {2, 1, 2, 2});
  Value b = g.input("b", DType::f64, {3, 2, 1});
  Value out = matmul(a, b);
  std::vector<double> av = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> bv = {1, 0, 0, 1, 1, 1};
  std::vector<Tensor> result = evaluate_reference(
      g, {out}, {Tensor::from_doubles(DType::f64, {2, 1, 2, 2}, av),
                 Tensor::from_doubles(DType::f64, {3, 2, 1}, bv)});
  // out[i, j] = a[i, 0] @ b[j]: column 0, column 1, row sums.
  std::vector<double> expected = {1, 3, 2, 4, 3, 7, 5, 7, 6, 8, 11, 15};
  EXPECT_ALLCLOSE(result[0], Tensor::from_doubles(DType::f64, {2, 3, 2, 1}, expected), 0, 0);
}

TEST(Matmul, Errors) {
  Graph g;
  Value a = g.input("a", DType::f32, {4, 3});
  Value b = g.input("b", DType::f32, {4, 5});
  EXPECT_EQ(error_of([&] { matmul(a, b); }),
            "[matmul] a (4,3) and b (4,5): contracting dims 3 vs 4");
  Value vec = g.input("vec", DType::f32, {3});
  EXPECT_EQ(error_of([&] { matmul(a, vec); }),
            "[matmul] a (4,3) and b (3): operands need rank >= 2");
  Value a3 = g.input("a3", DType::f32, {2, 4, 3});
  Value b3 = g.input("b3", DType::f32, {3, 3, 5});
  EXPECT_EQ(error_of([&] { matmul(a3, b3); }), "[matmul] cannot broadcast (2) with (3)");
  Value f64 = g.input("f64", DType::f64, {3, 5});
  EXPECT_EQ(error_of([&] { matmul(a, f64); }), "[matmul] dtype mismatch: f32 vs f64");
}

// ---- gather / scatter_add ----

TEST(Gather, ShapeReplacesTheAxisByTheIndicesShape) {
  Graph g;
  Value x = g.input("x", DType::f32, {5, 2, 3});
  Value idx = g.input("idx", DType::i32, {4, 6});
  Value out = gather(x, idx, 1);
  EXPECT_EQ(out.shape(), (Shape{5, 4, 6, 3}));
  EXPECT_EQ(out.dtype(), DType::f32);
  Value last = gather(x, g.input("idx64", DType::i64, {7}), -1);
  EXPECT_EQ(last.shape(), (Shape{5, 2, 7}));
  EXPECT_EQ(last.node().attr<GatherAttrs>().axis, 2);
  Value scalar_index = gather(x, g.input("one", DType::i64, {}), 0);
  EXPECT_EQ(scalar_index.shape(), (Shape{2, 3}));
}

TEST(Gather, Errors) {
  Graph g;
  Value x = g.input("x", DType::f32, {5, 2, 3});
  Value fidx = g.input("fidx", DType::f32, {4});
  EXPECT_EQ(error_of([&] { gather(x, fidx, 0); }),
            "[gather] indices must be i32 or i64, got f32");
  Value idx = g.input("idx", DType::i32, {4});
  EXPECT_EQ(error_of([&] { gather(x, idx, 3); }), "[gather] axis 3 out of range for rank 3");
}

TEST(ScatterAdd, KeepsTheOperandShapeAndChecksUpdates) {
  Graph g;
  Value x = g.input("x", DType::f32, {3, 4});
  Value idx = g.input("idx", DType::i64, {5});
  Value updates = g.input("updates", DType::f32, {5, 4});
  Value out = scatter_add(x, idx, updates, 0);
  EXPECT_EQ(out.op(), OpKind::scatter_add);
  EXPECT_EQ(out.shape(), (Shape{3, 4}));
  Value bad = g.input("bad", DType::f32, {5, 3});
  EXPECT_EQ(error_of([&] { scatter_add(x, idx, bad, 0); }),
            "[scatter_add] updates (5,3) should be (5,4) for operand (3,4), indices (5), axis 0");
  Value f64 = g.input("f64", DType::f64, {5, 4});
  EXPECT_EQ(error_of([&] { scatter_add(x, idx, f64, 0); }),
            "[scatter_add] dtype mismatch: f32 vs f64");
}

// ---- composite builders ----

TEST(Composite, SoftmaxFamily) {
  Graph g;
  Value x = g.input("x", DType::bf16, {2, 5});
  Value s = softmax(x);
  EXPECT_EQ(s.op(), OpKind::softmax);
  EXPECT_EQ(s.shape(), (Shape{2, 5}));
  EXPECT_EQ(s.dtype(), DType::bf16);
  EXPECT_EQ(s.node().attr<SoftmaxAttrs>().axis, 1);
  Value ls = log_softmax(x, 0);
  EXPECT_EQ(ls.op(), OpKind::log_softmax);
  EXPECT_EQ(ls.node().attr<SoftmaxAttrs>().axis, 0);
  Value ints = g.input("ints", DType::i32, {2, 5});
  EXPECT_EQ(error_of([&] { softmax(ints); }), "[softmax] needs a floating dtype, got i32");
  EXPECT_EQ(error_of([&] { log_softmax(x, 2); }), "[log_softmax] axis 2 out of range for rank 2");
  Value scalar = g.input("scalar", DType::f32, {});
  EXPECT_EQ(error_of([&] { softmax(scalar); }), "[softmax] x () has no axis");
}

TEST(Composite, LayerNorm) {
  Graph g;
  Value x = g.input("x", DType::f32, {2, 3, 5});
  Value gamma = g.input("gamma", DType::f32, {5});
  Value beta = g.input("beta", DType::f32, {5});
  Value y = layer_norm(x, gamma, beta, 1e-5);
  EXPECT_EQ(y.op(), OpKind::layer_norm);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(y.node().attr<LayerNormAttrs>().eps, 1e-5);
  Value short_gamma = g.input("short", DType::f32, {4});
  EXPECT_EQ(error_of([&] { layer_norm(x, short_gamma, beta, 1e-5); }),
            "[layer_norm] gamma/beta (4) should be (5) for x (2,3,5)");
  Value f64 = g.input("f64", DType::f64, {5});
  EXPECT_EQ(error_of([&] { layer_norm(x, gamma, f64, 1e-5); }),
            "[layer_norm] dtype mismatch: f32 vs f64");
  EXPECT_EQ(error_of([&] { layer_norm(x, gamma, beta, -1.0); }), "[layer_norm] eps -1 is negative");
}

TEST(Composite, LayerNormGrads) {
  Graph g;
  Value x = g.input("x", DType::bf16, {2, 3, 5});
  Value gamma = g.input("gamma", DType::bf16, {5});
  Value dy = g.input("dy", DType::bf16, {2, 3, 5});
  Value grads = layer_norm_grads(x, gamma, dy, 1e-5);
  EXPECT_EQ(grads.op(), OpKind::layer_norm_grads);
  EXPECT_EQ(grads.dtype(), DType::bf16);
  EXPECT_EQ(grads.shape(), (Shape{2 * 3 * 5 + 2 * 5}));
  EXPECT_EQ(grads.node().attr<LayerNormAttrs>().eps, 1e-5);
  EXPECT_EQ(error_of([&] { layer_norm_grads(x, g.input("g4", DType::bf16, {4}), dy, 1e-5); }),
            "[layer_norm_grads] gamma (4) should be (5) for x (2,3,5)");
  EXPECT_EQ(error_of([&] { layer_norm_grads(x, gamma, g.input("d", DType::bf16, {3, 5}), 1e-5); }),
            "[layer_norm_grads] dy (3,5) should be x's (2,3,5)");
  EXPECT_EQ(error_of([&] { layer_norm_grads(x, gamma, g.input("f", DType::f32, {2, 3, 5}), 0.0); }),
            "[layer_norm_grads] dtype mismatch: bf16 vs f32");
  EXPECT_EQ(error_of([&] { layer_norm_grads(x, gamma, dy, -1.0); }),
            "[layer_norm_grads] eps -1 is negative");
  EXPECT_EQ(error_of([&] {
              layer_norm_grads(g.input("s", DType::bf16, {}), gamma, g.input("ds", DType::bf16, {}),
                               0.0);
            }),
            "[layer_norm_grads] x () has no axis");
  // layer_norm's gradients are slices of one such node: dx (reshaped to x's shape), then gamma's
  // and beta's, slices of its [d gamma | d beta] slice.
  Value x32 = g.input("x32", DType::f32, {2, 3, 5});
  Value gamma32 = g.input("gamma32", DType::f32, {5}), beta32 = g.input("beta32", DType::f32, {5});
  std::vector<Value> derivatives = grad(reduce_sum(layer_norm(x32, gamma32, beta32, 1e-5)),
                                        {x32, gamma32, beta32});
  ASSERT_EQ(derivatives[0].op(), OpKind::reshape);
  EXPECT_EQ(derivatives[0].shape(), (Shape{2, 3, 5}));
  const Node& dx = g.node(derivatives[0].node().inputs[0]);
  ASSERT_EQ(dx.op, OpKind::slice);
  EXPECT_EQ(dx.attr<SliceAttrs>().start, (Shape{0}));
  int32_t fused = dx.inputs[0];
  EXPECT_EQ(g.node(fused).op, OpKind::layer_norm_grads);
  for (int64_t i : {0, 1}) {
    const Node& sliced = derivatives[static_cast<size_t>(i) + 1].node();
    ASSERT_EQ(sliced.op, OpKind::slice);
    EXPECT_EQ(sliced.shape, (Shape{5}));
    EXPECT_EQ(sliced.attr<SliceAttrs>().start, (Shape{5 * i}));
    const Node& params = g.node(sliced.inputs[0]);
    ASSERT_EQ(params.op, OpKind::slice);
    EXPECT_EQ(params.attr<SliceAttrs>().start, (Shape{30}));
    EXPECT_EQ(params.shape, (Shape{10}));
    EXPECT_EQ(params.inputs[0], fused);
  }
}

TEST(Composite, Gelu) {
  Graph g;
  Value x = g.input("x", DType::f16, {3});
  Value y = gelu(x);
  EXPECT_EQ(y.op(), OpKind::gelu);
  EXPECT_EQ(y.dtype(), DType::f16);
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_EQ(error_of([&] { gelu(g.input("b", DType::boolean, {3})); }),
            "[gelu] needs a floating dtype, got bool");
}

TEST(Composite, GeluGrad) {
  Graph g;
  Value x = g.input("x", DType::bf16, {2, 3}), dy = g.input("dy", DType::bf16, {2, 3});
  Value dx = gelu_grad(x, dy);
  EXPECT_EQ(dx.op(), OpKind::gelu_grad);
  EXPECT_EQ(dx.dtype(), DType::bf16);
  EXPECT_EQ(dx.shape(), (Shape{2, 3}));
  EXPECT_EQ(error_of([&] { gelu_grad(x, g.input("f32", DType::f32, {2, 3})); }),
            "[gelu_grad] dtype mismatch: bf16 vs f32");
  EXPECT_EQ(error_of([&] { gelu_grad(x, g.input("short", DType::bf16, {3})); }),
            "[gelu_grad] dy (3) should be x's (2,3)");
  // gelu's gradient is this one node.
  Value f32 = g.input("x32", DType::f32, {2, 3});
  EXPECT_EQ(grad(reduce_sum(gelu(f32)), {f32})[0].op(), OpKind::gelu_grad);
}

TEST(Composite, CrossEntropy) {
  Graph g;
  Value logits = g.input("logits", DType::f32, {4, 10});
  Value labels = g.input("labels", DType::i64, {4});
  Value loss = cross_entropy(logits, labels, 3);
  EXPECT_EQ(loss.op(), OpKind::cross_entropy);
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_EQ(loss.dtype(), DType::f32);
  EXPECT_EQ(loss.node().attr<CrossEntropyAttrs>().ignore_index, 3);
  Value default_ignore = cross_entropy(logits, g.input("l32", DType::i32, {4}));
  EXPECT_EQ(default_ignore.node().attr<CrossEntropyAttrs>().ignore_index, -100);

  Value labels2d = g.input("labels2d", DType::i64, {4, 1});
  EXPECT_EQ(error_of([&] { cross_entropy(logits, labels2d); }),
            "[cross_entropy] labels (4,1) should be (4) for logits (4,10)");
  Value float_labels = g.input("float_labels", DType::f32, {4});
  EXPECT_EQ(error_of([&] { cross_entropy(logits, float_labels); }),
            "[cross_entropy] labels must be i32 or i64, got f32");
  Value logits3d = g.input("logits3d", DType::f32, {2, 4, 10});
  EXPECT_EQ(error_of([&] { cross_entropy(logits3d, labels); }),
            "[cross_entropy] logits (2,4,10) should be [N, C]");
  Value short_labels = g.input("short", DType::i64, {3});
  EXPECT_EQ(error_of([&] { cross_entropy(logits, short_labels); }),
            "[cross_entropy] labels (3) should be (4) for logits (4,10)");
}

TEST(Composite, Attention) {
  Graph g;
  Value q = g.input("q", DType::f32, {2, 3, 4, 8});
  Value k = g.input("k", DType::f32, {2, 3, 6, 8});
  Value v = g.input("v", DType::f32, {2, 3, 6, 5});
  Value mask = g.input("mask", DType::f32, {2, 1, 1, 6});
  Value out = attention(q, k, v, mask, 0.125);
  EXPECT_EQ(out.op(), OpKind::attention);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(out.node().attr<AttentionAttrs>().scale, 0.125);
  EXPECT_EQ(out.node().attr<AttentionAttrs>().layout, AttentionLayout::heads_first);
  Value full_mask = g.input("full_mask", DType::f32, {2, 3, 4, 6});
  EXPECT_EQ(attention(q, k, v, full_mask, 1.0).shape(), (Shape{2, 3, 4, 5}));

  Value bad_mask = g.input("bad_mask", DType::f32, {2, 1, 1, 5});
  EXPECT_EQ(error_of([&] { attention(q, k, v, bad_mask, 1.0); }),
            "[attention] mask (2,1,1,5) does not fit the scores (2,3,4,6)");
  Value low_rank_mask = g.input("low_rank_mask", DType::f32, {4, 6});
  EXPECT_EQ(error_of([&] { attention(q, k, v, low_rank_mask, 1.0); }),
            "[attention] mask (4,6) does not fit the scores (2,3,4,6)");
  Value k7 = g.input("k7", DType::f32, {2, 3, 6, 7});
  EXPECT_EQ(error_of([&] { attention(q, k7, v, mask, 1.0); }),
            "[attention] q (2,3,4,8), k (2,3,6,7), v (2,3,6,5): head dims 8 vs 7");
  Value v5 = g.input("v5", DType::f32, {2, 3, 5, 5});
  EXPECT_EQ(error_of([&] { attention(q, k, v5, mask, 1.0); }),
            "[attention] q (2,3,4,8), k (2,3,6,8), v (2,3,5,5): key lengths 6 vs 5");
  Value kb = g.input("kb", DType::f32, {1, 3, 6, 8});
  EXPECT_EQ(error_of([&] { attention(q, kb, v, mask, 1.0); }),
            "[attention] q (2,3,4,8), k (1,3,6,8), v (2,3,6,5): batch dims differ");
  Value int_mask = g.input("int_mask", DType::i32, {2, 1, 1, 6});
  EXPECT_EQ(error_of([&] { attention(q, k, v, int_mask, 1.0); }),
            "[attention] needs a floating dtype, got i32");
  Value v64 = g.input("v64", DType::f64, {2, 3, 6, 5});
  EXPECT_EQ(error_of([&] { attention(q, k, v64, mask, 1.0); }),
            "[attention] dtype mismatch: f32 vs f64");
  // A mask of its own floating dtype; dropout needs its keys and a rate in [0, 1).
  EXPECT_EQ(attention(q, k, v, g.input("mask64", DType::f64, {2, 1, 1, 6}), 1.0).dtype(),
            DType::f32);
  Value seed = g.input("seed", DType::i64, {});
  Value keys = g.input("keys", DType::i64, {2});
  Value dropped = attention(q, k, v, mask, 1.0, {seed, keys, 0.1, 3});
  EXPECT_EQ(dropped.node().inputs.size(), 6u);
  EXPECT_EQ(dropped.node().attr<AttentionAttrs>().stream, 3u);
  EXPECT_EQ(error_of([&] { attention(q, k, v, mask, 1.0, {seed, keys, 1.0, 0}); }),
            "[attention] dropout rate 1 out of range [0, 1)");
  Value three_keys = g.input("three_keys", DType::i64, {3});
  EXPECT_EQ(error_of([&] { attention(q, k, v, mask, 1.0, {seed, three_keys, 0.1, 0}); }),
            "[attention] offset must be an i64 scalar or an i64 vector of one key per leading "
            "row (2 for (2,3,4,6)), got i64(3)");

  // The gradient: one flat [dq | dk | dv] of the operands' sizes; out and dout of out's shape.
  Value dout = g.input("dout", DType::f32, {2, 3, 4, 5});
  Value grads = attention_grad(q, k, v, mask, out, dout, 0.125);
  EXPECT_EQ(grads.op(), OpKind::attention_grad);
  EXPECT_EQ(grads.shape(), (Shape{2 * 3 * 4 * 8 + 2 * 3 * 6 * 8 + 2 * 3 * 6 * 5}));
  EXPECT_EQ(error_of([&] { attention_grad(q, k, v, mask, out, q, 0.125); }),
            "[attention_grad] output/cotangent (2,3,4,8) should be (2,3,4,5)");
}

// seq_first: q, k, v and the result [B, S, H, D], the scores and the mask still [B, H, Sq, Sk].
TEST(Composite, AttentionSeqFirst) {
  Graph g;
  constexpr AttentionLayout kSeqFirst = AttentionLayout::seq_first;
  Value q = g.input("q", DType::f32, {2, 4, 3, 8});
  Value k = g.input("k", DType::f32, {2, 6, 3, 8});
  Value v = g.input("v", DType::f32, {2, 6, 3, 5});
  Value mask = g.input("mask", DType::f32, {2, 1, 4, 6});
  Value out = attention(q, k, v, mask, 0.125, {}, std::nullopt, kSeqFirst);
  EXPECT_EQ(out.shape(), (Shape{2, 4, 3, 5}));
  EXPECT_EQ(out.node().attr<AttentionAttrs>().layout, kSeqFirst);
  EXPECT_EQ(heads_first_shape({2, 4, 3, 8}, kSeqFirst), (Shape{2, 3, 4, 8}));
  EXPECT_EQ(heads_first_shape({2, 4, 3, 8}, AttentionLayout::heads_first), (Shape{2, 4, 3, 8}));

  // Read heads_first, this mask would fit ([2, 4, 3, 6] scores); seq_first it does not.
  Value heads_first_mask = g.input("heads_first_mask", DType::f32, {2, 4, 1, 6});
  EXPECT_EQ(error_of([&] { attention(q, k, v, heads_first_mask, 1.0, {}, std::nullopt,
                                     kSeqFirst); }),
            "[attention] mask (2,4,1,6) does not fit the scores (2,3,4,6)");
  Value k2 = g.input("k2", DType::f32, {2, 6, 2, 8});
  EXPECT_EQ(error_of([&] { attention(q, k2, v, mask, 1.0, {}, std::nullopt, kSeqFirst); }),
            "[attention] q (2,4,3,8), k (2,6,2,8), v (2,6,3,5): batch or head dims differ");
  Value q2 = g.input("q2", DType::f32, {4, 8});
  EXPECT_EQ(error_of([&] { attention(q2, q2, q2, g.input("m2", DType::f32, {4, 4}), 1.0, {},
                                     std::nullopt, kSeqFirst); }),
            "[attention] q (4,8), k (4,8), v (4,8): q, k and v need the same rank >= 3");

  Value dout = g.input("dout", DType::f32, {2, 4, 3, 5});
  Value grads = attention_grad(q, k, v, mask, out, dout, 0.125, {}, std::nullopt, kSeqFirst);
  EXPECT_EQ(grads.shape(), (Shape{2 * 4 * 3 * 8 + 2 * 6 * 3 * 8 + 2 * 6 * 3 * 5}));
  EXPECT_EQ(grads.node().attr<AttentionAttrs>().layout, kSeqFirst);
  Value heads_first_dout = g.input("heads_first_dout", DType::f32, {2, 3, 4, 5});
  EXPECT_EQ(error_of([&] { attention_grad(q, k, v, mask, out, heads_first_dout, 0.125, {},
                                          std::nullopt, kSeqFirst); }),
            "[attention_grad] output/cotangent (2,3,4,5) should be (2,4,3,5)");
  // Its VJP keeps the layout.
  Value loss = reduce_sum(out);
  std::vector<Value> dq = grad(loss, {q});
  ASSERT_EQ(dq[0].shape(), q.shape());
  int attention_grads = 0;
  for (const Node& node : g.nodes()) {
    if (node.op != OpKind::attention_grad) continue;
    ++attention_grads;
    EXPECT_EQ(node.attr<AttentionAttrs>().layout, kSeqFirst);
  }
  EXPECT_EQ(attention_grads, 2);  // the one built above, and the VJP's
}

TEST(Composite, Dropout) {
  Graph g;
  Value x = g.input("x", DType::f32, {4, 5});
  Value seed = g.input("seed", DType::i64, {});
  Value offset = g.input("offset", DType::i64, {});
  Value y = dropout(x, seed, offset, 0.25, 7);
  EXPECT_EQ(y.op(), OpKind::dropout);
  EXPECT_EQ(y.shape(), (Shape{4, 5}));
  EXPECT_EQ(y.node().attr<DropoutAttrs>().rate, 0.25);
  EXPECT_EQ(y.node().attr<DropoutAttrs>().stream, 7u);
  // Its gradient drops the cotangent with the same keys.
  Value dx = grad(reduce_sum(y), {x})[0];
  EXPECT_EQ(dx.op(), OpKind::dropout);
  EXPECT_TRUE(dx.node().inputs[1] == seed.id() && dx.node().inputs[2] == offset.id());
  EXPECT_EQ(dx.node().attr<DropoutAttrs>(), y.node().attr<DropoutAttrs>());
  int32_t before = g.size();
  EXPECT_TRUE(dropout(x, seed, offset, 0.0, 7).is(x));
  EXPECT_EQ(g.size(), before);

  EXPECT_EQ(error_of([&] { dropout(x, seed, offset, 1.0, 0); }),
            "[dropout] rate 1 out of range [0, 1)");
  EXPECT_EQ(error_of([&] { dropout(x, seed, offset, -0.1, 0); }),
            "[dropout] rate -0.1 out of range [0, 1)");
  Value seed32 = g.input("seed32", DType::i32, {});
  EXPECT_EQ(error_of([&] { dropout(x, seed32, offset, 0.1, 0); }),
            "[dropout] seed must be an i64 scalar, got i32()");
  Value offsets = g.input("offsets", DType::i64, {2});
  EXPECT_EQ(error_of([&] { dropout(x, seed, offsets, 0.1, 0); }),
            "[dropout] offset must be an i64 scalar or an i64 vector of one key per leading row "
            "(4 for (4,5)), got i64(2)");
  // One key per row of x.
  Value row_keys = g.input("row_keys", DType::i64, {4});
  Value per_row = dropout(x, seed, row_keys, 0.25, 7);
  EXPECT_EQ(per_row.node().inputs[2], row_keys.id());
}

// ---- decompositions ----

struct CompositeCase {
  std::string name;
  std::vector<Tensor> arguments;  // in input order
  std::function<Value(Graph&, const std::vector<Value>&)> build;
};

std::vector<CompositeCase> composite_cases(DType dtype) {
  std::mt19937_64 rng(42);
  auto rand = [&](const Shape& shape, double low = -2.0, double high = 2.0) {
    return testing::random_tensor(rng, dtype, shape, low, high);
  };
  Tensor labels = Tensor::from_doubles(DType::i64, {5}, {0, -100, 3, 2, 0});
  Tensor mask(dtype, {2, 1, 1, 4});
  mask.set(3, -1e4);  // batch 0 masks its last key
  return {
      {"softmax", {rand({3, 4})}, [](Graph&, auto& a) { return softmax(a[0], 0); }},
      {"log_softmax", {rand({3, 4})}, [](Graph&, auto& a) { return log_softmax(a[0]); }},
      {"layer_norm", {rand({2, 3, 4}), rand({4}, 0.5, 1.5), rand({4})},
       [](Graph&, auto& a) { return layer_norm(a[0], a[1], a[2], 1e-5); }},
      {"gelu", {rand({7}, -3, 3)}, [](Graph&, auto& a) { return gelu(a[0]); }},
      {"cross_entropy", {rand({5, 4}, -3, 3), labels},
       [](Graph&, auto& a) { return cross_entropy(a[0], a[1]); }},
      {"attention", {rand({2, 2, 3, 5}), rand({2, 2, 4, 5}), rand({2, 2, 4, 3}), mask},
       [](Graph&, auto& a) { return attention(a[0], a[1], a[2], a[3], 0.5); }},
      {"dropout", {rand({6, 5})},
       [](Graph& g, auto& a) {
         Value seed = constant(g, Tensor::scalar(DType::i64, 1234));
         Value offset = constant(g, Tensor::scalar(DType::i64, 7));
         return dropout(a[0], seed, offset, 0.4, 3);
       }},
  };
}

// The decomposition holds no composite node and has the composite's type; the reference kernel
// of the composite node and the reference run of its decomposition agree.
void check_decompositions(DType dtype, double rtol, double atol) {
  for (const CompositeCase& c : composite_cases(dtype)) {
    SCOPED_TRACE(c.name + " " + std::string(dtype_name(dtype)));
    Graph g;
    std::vector<Value> args;
    for (size_t i = 0; i < c.arguments.size(); ++i) {
      const Tensor& t = c.arguments[i];
      args.push_back(g.input("a" + std::to_string(i), t.dtype(), t.shape()));
    }
    Value node = c.build(g, args);
    ASSERT_EQ(op_info(node.op()).category, OpCategory::composite);
    std::vector<Value> operands;
    for (int32_t id : node.node().inputs) operands.push_back(g.value(id));
    Value decomposed = op_info(node.op()).decompose(node.node(), operands);
    EXPECT_EQ(decomposed.dtype(), node.dtype());
    EXPECT_EQ(decomposed.shape(), node.shape());
    for (int32_t id : live_nodes(g, {decomposed})) {
      EXPECT_NE(op_info(g.node(id).op).category, OpCategory::composite)
          << "node %" << id << " is " << op_name(g.node(id).op);
    }
    std::vector<Tensor> results = evaluate_reference(g, {node, decomposed}, c.arguments);
    EXPECT_ALLCLOSE(results[1], results[0], rtol, atol);
  }
}

TEST(Decompose, CoreOpsOnlyAndMatchTheReferenceKernelsInF64) {
  check_decompositions(DType::f64, 1e-12, 1e-12);
}

// Half inputs decompose through f32; results round to one bf16 ulp of the kernel's.
TEST(Decompose, CoreOpsOnlyAndMatchTheReferenceKernelsInBf16) {
  check_decompositions(DType::bf16, 1.6e-2, 1e-2);
}

TEST(Decompose, SoftmaxValues) {
  Graph g;
  Value x = g.input("x", DType::f64, {2, 3});
  Value decomposed = op_info(OpKind::softmax).decompose(softmax(x).node(), std::vector<Value>{x});
  // Large logits would overflow exp without the max shift.
  Tensor logits =
      Tensor::from_doubles(DType::f64, {2, 3}, {0, 0, 0, 1000, 1000, 1000 + std::log(2.0)});
  std::vector<Tensor> result = evaluate_reference(g, {decomposed}, {logits});
  std::vector<double> expected = {1. / 3, 1. / 3, 1. / 3, 0.25, 0.25, 0.5};
  EXPECT_ALLCLOSE(result[0], Tensor::from_doubles(DType::f64, {2, 3}, expected), 1e-12, 0);
}

}  // namespace
}  // namespace kiln
