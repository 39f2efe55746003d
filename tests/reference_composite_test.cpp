// Each composite's direct reference kernel against its decomposition into core ops, evaluated by
// the same backend on random inputs of several shapes and dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/op_registry.h"
#include "kiln/ir/ops.h"
#include "support/testing.h"

namespace kiln {
namespace {

const DType kDTypes[] = {DType::f64, DType::f32, DType::bf16};

// f64 must agree to rounding; f32 and bf16 decompositions round every intermediate (bf16 ones
// compute in f32, and attention rounds its probabilities to bf16 before the second product).
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return 1e-12;
    case DType::f32:
      return 2e-5;
    default:
      return 2e-2;
  }
}

// Decomposes `composite` (a composite node's value) in its graph and checks that the
// decomposition holds core ops only and computes what the kernel computes.
void expect_matches_decomposition(Value composite, const std::vector<Tensor>& arguments) {
  const Node& node = composite.node();
  ASSERT_EQ(op_info(node.op).category, OpCategory::composite);
  Graph& graph = composite.graph();
  std::vector<Value> operands;
  for (int32_t id : node.inputs) operands.push_back(graph.value(id));
  Value decomposed = op_info(node.op).decompose(node, operands);
  for (int32_t id : live_nodes(graph, {decomposed})) {
    EXPECT_NE(op_info(graph.node(id).op).category, OpCategory::composite)
        << op_name(node.op) << " decomposes into " << op_name(graph.node(id).op);
  }
  std::vector<Tensor> out = evaluate_reference(graph, {composite, decomposed}, arguments);
  EXPECT_EQ(out[1].dtype(), out[0].dtype());
  double tol = tolerance(graph.node(node.inputs[0]).dtype);  // bf16 operands may give f32
  std::string mismatch = testing::compare_tensors(out[0], out[1], tol, tol);
  EXPECT_TRUE(mismatch.empty()) << op_name(node.op) << " " << dtype_name(node.dtype)
                                << shape_str(node.shape) << ": " << mismatch;
}

TEST(ReferenceComposite, SoftmaxAndLogSoftmax) {
  std::mt19937_64 rng(1);
  struct Case {
    Shape shape;
    int64_t axis;
  };
  for (DType dtype : kDTypes) {
    for (const Case& c : {Case{{5}, 0}, Case{{3, 4}, 0}, Case{{3, 4}, -1}, Case{{2, 3, 4}, 1},
                          Case{{2, 1, 6}, 2}}) {
      Graph g;
      Value x = g.input("x", dtype, c.shape);
      Tensor tx = testing::random_tensor(rng, dtype, c.shape, -8.0, 8.0);
      expect_matches_decomposition(softmax(x, c.axis), {tx});
      expect_matches_decomposition(log_softmax(x, c.axis), {tx});
    }
  }
}

TEST(ReferenceComposite, LayerNorm) {
  std::mt19937_64 rng(2);
  for (DType dtype : kDTypes) {
    for (const Shape& shape : {Shape{4}, Shape{3, 5}, Shape{2, 3, 8}}) {
      Graph g;
      Shape param{shape.back()};
      Value x = g.input("x", dtype, shape);
      Value gamma = g.input("gamma", dtype, param);
      Value beta = g.input("beta", dtype, param);
      std::vector<Tensor> arguments = {testing::random_tensor(rng, dtype, shape, -3.0, 5.0),
                                       testing::random_tensor(rng, dtype, param, 0.5, 1.5),
                                       testing::random_tensor(rng, dtype, param, -1.0, 1.0)};
      expect_matches_decomposition(layer_norm(x, gamma, beta, 1e-5), arguments);
    }
  }
}

TEST(ReferenceComposite, LayerNormGrads) {
  std::mt19937_64 rng(9);
  for (DType dtype : kDTypes) {
    for (const Shape& shape : {Shape{4}, Shape{3, 5}, Shape{2, 3, 8}}) {
      Shape param{shape.back()};
      Tensor x = testing::random_tensor(rng, dtype, shape, -3.0, 5.0);
      Tensor gamma = testing::random_tensor(rng, dtype, param, 0.5, 1.5);
      Tensor dy = testing::random_tensor(rng, dtype, shape, -1.0, 1.0);
      Graph g;
      expect_matches_decomposition(layer_norm_grads(g.input("x", dtype, shape),
                                                    g.input("gamma", dtype, param),
                                                    g.input("dy", dtype, shape), 1e-5),
                                   {x, gamma, dy});
    }
  }
}

TEST(ReferenceComposite, Gelu) {
  std::mt19937_64 rng(3);
  for (DType dtype : kDTypes) {
    for (const Shape& shape : {Shape{7}, Shape{3, 4}, Shape{2, 2, 5}}) {
      Graph g;
      Value x = g.input("x", dtype, shape);
      expect_matches_decomposition(gelu(x), {testing::random_tensor(rng, dtype, shape, -4.0, 4.0)});
    }
  }
}

TEST(ReferenceComposite, GeluGrad) {
  std::mt19937_64 rng(8);
  for (DType dtype : kDTypes) {
    for (const Shape& shape : {Shape{7}, Shape{3, 4}, Shape{2, 2, 5}}) {
      Graph g;
      Value x = g.input("x", dtype, shape), dy = g.input("dy", dtype, shape);
      expect_matches_decomposition(gelu_grad(x, dy),
                                   {testing::random_tensor(rng, dtype, shape, -4.0, 4.0),
                                    testing::random_tensor(rng, dtype, shape, -1.0, 1.0)});
    }
  }
}

TEST(ReferenceComposite, CrossEntropy) {
  std::mt19937_64 rng(4);
  struct Case {
    int64_t rows, classes, ignore_index;
    DType label_dtype;
  };
  for (DType dtype : kDTypes) {
    for (const Case& c : {Case{4, 3, -100, DType::i64}, Case{8, 10, -100, DType::i32},
                          Case{6, 5, 0, DType::i64}, Case{1, 5, -1, DType::i32}}) {
      Graph g;
      Value logits = g.input("logits", dtype, {c.rows, c.classes});
      Value labels = g.input("labels", c.label_dtype, {c.rows});
      Tensor tl = testing::random_tensor(rng, dtype, {c.rows, c.classes}, -5.0, 5.0);
      Tensor tlab = testing::random_integers(rng, c.label_dtype, {c.rows}, 0, c.classes);
      if (c.rows > 2) tlab.set(1, static_cast<double>(c.ignore_index));  // at least one ignored
      expect_matches_decomposition(cross_entropy(logits, labels, c.ignore_index), {tl, tlab});
    }
  }
}

TEST(ReferenceComposite, Attention) {
  std::mt19937_64 rng(5);
  struct Case {
    Shape q, k, v, mask;
  };
  for (DType dtype : kDTypes) {
    for (const Case& c :
         {Case{{3, 4}, {5, 4}, {5, 2}, {3, 5}}, Case{{3, 4}, {5, 4}, {5, 2}, {1, 5}},
          Case{{2, 3, 4, 8}, {2, 3, 6, 8}, {2, 3, 6, 5}, {2, 1, 4, 6}},
          Case{{2, 3, 4, 8}, {2, 3, 6, 8}, {2, 3, 6, 5}, {1, 1, 1, 6}}}) {
      Graph g;
      Value q = g.input("q", dtype, c.q);
      Value k = g.input("k", dtype, c.k);
      Value v = g.input("v", dtype, c.v);
      Value mask = g.input("mask", dtype, c.mask);
      Tensor tmask = testing::random_tensor(rng, dtype, c.mask, -2.0, 0.0);
      tmask.set(0, -1e4);  // one masked-out key, as a padding mask would give
      std::vector<Tensor> arguments = {testing::random_tensor(rng, dtype, c.q),
                                       testing::random_tensor(rng, dtype, c.k),
                                       testing::random_tensor(rng, dtype, c.v), tmask};
      double scale = 1.0 / std::sqrt(static_cast<double>(c.q.back()));
      expect_matches_decomposition(attention(q, k, v, mask, scale), arguments);
    }
  }
}

// Attention's dropout keyed by one key and by one key per leading row, and its gradient op (on a
// random output and cotangent: kernel and decomposition read them alike); bf16 operands also with
// f32 results, as the bf16 pass builds them; heads_first ([B, H, S, D]) and seq_first
// ([B, S, H, D]).
TEST(ReferenceComposite, AttentionDropoutAndGradient) {
  std::mt19937_64 rng(8);
  Shape ms{2, 1, 1, 7};
  for (DType dtype : kDTypes) {
    for (auto [row_keys, layout] :
         {std::pair{false, AttentionLayout::heads_first}, {true, AttentionLayout::heads_first},
          {false, AttentionLayout::seq_first}, {true, AttentionLayout::seq_first}}) {
      bool seq_first = layout == AttentionLayout::seq_first;
      auto laid_out = [seq_first](int64_t s, int64_t d) {
        return seq_first ? Shape{2, s, 3, d} : Shape{2, 3, s, d};
      };
      Shape qs = laid_out(5, 4), ks = laid_out(7, 4), vs = laid_out(7, 3), os = laid_out(5, 3);
      Graph g;
      Value q = g.input("q", dtype, qs), k = g.input("k", dtype, ks), v = g.input("v", dtype, vs);
      Value mask = g.input("mask", DType::f32, ms);
      Value out = g.input("out", dtype, os), dout = g.input("dout", dtype, os);
      Value seed = g.input("seed", DType::i64, {});
      Value offset = g.input("offset", DType::i64, row_keys ? Shape{2} : Shape{});
      std::vector<Tensor> arguments = {
          testing::random_tensor(rng, dtype, qs), testing::random_tensor(rng, dtype, ks),
          testing::random_tensor(rng, dtype, vs),
          testing::random_tensor(rng, DType::f32, ms, -3.0, 0.0),
          testing::random_tensor(rng, dtype, os), testing::random_tensor(rng, dtype, os),
          Tensor::scalar(DType::i64, 77),
          row_keys ? Tensor::from_doubles(DType::i64, {2}, {3, 11})
                   : Tensor::scalar(DType::i64, 5)};
      AttentionDropout drop{seed, offset, 0.3, 9};
      std::vector<std::optional<DType>> results = {std::nullopt};
      if (dtype == DType::bf16) results.push_back(DType::f32);
      for (std::optional<DType> result : results) {
        expect_matches_decomposition(attention(q, k, v, mask, 0.5, drop, result, layout),
                                     arguments);
        expect_matches_decomposition(
            attention_grad(q, k, v, mask, out, dout, 0.5, drop, result, layout), arguments);
      }
    }
  }
}

TEST(ReferenceComposite, Dropout) {
  std::mt19937_64 rng(6);
  struct Case {
    Shape shape;
    double rate;
    uint32_t stream;
  };
  for (DType dtype : kDTypes) {
    for (const Case& c : {Case{{100}, 0.1, 0}, Case{{8, 16}, 0.5, 7}, Case{{3, 5, 7}, 0.9, 2}}) {
      Graph g;
      Value x = g.input("x", dtype, c.shape);
      Value seed = g.input("seed", DType::i64, {});
      Value offset = g.input("offset", DType::i64, {});
      std::vector<Tensor> arguments = {testing::random_tensor(rng, dtype, c.shape),
                                       Tensor::scalar(DType::i64, 1234567),
                                       Tensor::scalar(DType::i64, 89)};
      expect_matches_decomposition(dropout(x, seed, offset, c.rate, c.stream), arguments);
    }
  }
}

}  // namespace
}  // namespace kiln
