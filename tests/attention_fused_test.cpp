// The fused attention op with dropout and its gradient (attention_grad): against the unfused
// composition softmax -> dropout -> product that the model spelled out before (same keys, so the
// same masks) on the reference backend; the CPU's flash kernels against the reference at a
// BERT-large head shape (head 64, seq 512) and at odd sizes, f32 and bf16, and seq_first against
// heads_first; and what a training graph keeps.
#include <gtest/gtest.h>

#include <string>

#include "kiln/autodiff/grad.h"
#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/compiler/pipeline.h"
#include "kiln/ir/ops.h"
#include "kiln/nn/attention.h"
#include "support/feeds.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::Feeds;

// softmax(q k^T * scale + mask) -> dropout -> times v, as separate ops.
Value unfused_attention(Value q, Value k, Value v, Value mask, double scale,
                        const AttentionDropout& drop) {
  DotAttrs qk{.lhs_batch = {0, 1}, .rhs_batch = {0, 1}, .lhs_contract = {3}, .rhs_contract = {3}};
  Value probs = softmax(dot_general(q, k, qk) * scale + mask, -1);
  if (drop.rate > 0.0) probs = dropout(probs, drop.seed, drop.offset, drop.rate, drop.stream);
  DotAttrs pv{.lhs_batch = {0, 1}, .rhs_batch = {0, 1}, .lhs_contract = {3}, .rhs_contract = {2}};
  return dot_general(probs, v, pv);
}

struct Case {
  const char* name;
  Shape q, kv;   // [B, H, S, D]
  Shape mask;    // additive
  bool causal;   // a [.., Sq, Sk] causal mask instead of random padding
  double rate;
};

// The output and the gradients of sum(out * weights) wrt q, k and v, fused and unfused.
TEST(AttentionFused, MatchesTheUnfusedCompositionWithTheSameDropoutMasks) {
  const std::vector<Case> cases = {
      {"padding", {2, 3, 5, 4}, {2, 3, 7, 4}, {2, 1, 1, 7}, false, 0.0},
      {"padding dropout", {2, 3, 5, 4}, {2, 3, 7, 4}, {2, 1, 1, 7}, false, 0.1},
      {"causal dropout", {1, 2, 6, 3}, {1, 2, 6, 3}, {1, 1, 6, 6}, true, 0.1},
      {"per-batch causal", {2, 1, 9, 5}, {2, 1, 9, 5}, {2, 1, 9, 9}, true, 0.4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph graph;
    Feeds in(graph, 11);
    Value q = in.any(DType::f64, c.q), k = in.any(DType::f64, c.kv), v = in.any(DType::f64, c.kv);
    Value mask;
    if (c.causal) {
      Tensor values(DType::f64, c.mask);
      int64_t sq = c.mask[2], sk = c.mask[3];
      for (int64_t i = 0; i < values.numel(); ++i) {
        bool future = i % sk > i / sk % sq;
        values.set(i, future ? -1e30 : 0.0);
      }
      mask = in.tensor(values);
    } else {
      mask = in.any(DType::f64, c.mask, -4.0, 0.0);
    }
    AttentionDropout drop{in.scalar(DType::i64, 1234), in.integers(DType::i64, {c.q[0]}, 0, 100),
                          c.rate, 6};
    Value weights = in.any(DType::f64, {c.q[0], c.q[1], c.q[2], c.kv[3]});
    std::vector<Value> outputs;
    for (bool fused : {true, false}) {
      Value out = fused ? attention(q, k, v, mask, 0.6, drop)
                        : unfused_attention(q, k, v, mask, 0.6, drop);
      outputs.push_back(out);
      for (Value g : grad(reduce_sum(out * weights), {q, k, v})) outputs.push_back(g);
    }
    std::vector<Tensor> results = evaluate_reference(graph, outputs, in.arguments());
    for (size_t i = 0; i < 4; ++i) {
      SCOPED_TRACE(i == 0 ? "output" : "gradient " + std::to_string(i - 1));
      EXPECT_ALLCLOSE(results[i], results[i + 4], 1e-12, 1e-12);
    }
  }
}

// The model's training path builds one attention node with its dropout and one attention_grad,
// and after compilation for the CPU nothing of the scores' [B, H, S, S] size is left.
TEST(AttentionFused, TrainingGraphKeepsNoScoresSizedValue) {
  constexpr int64_t kBatch = 2, kSeq = 40, kHeads = 2, kHeadSize = 8;
  Graph graph;
  Value x = graph.input("x", DType::f32, {kBatch, kSeq, kHeads * kHeadSize});
  Value keep = graph.input("attention_mask", DType::f32, {kBatch, kSeq});
  DropoutContext dropout = DropoutContext::with_inputs(graph, kBatch);
  Value out = multi_head_attention(x * 0.5, x * 2.0, x, extended_attention_mask(keep, DType::f32),
                                   kHeads, 0.25, 0.1, dropout);
  Value dx = grad(reduce_sum(out * out), {x})[0];
  for (bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16" : "f32");
    CompileOptions options;
    options.bf16 = bf16;
    Program program =
        compile_program(graph, {out, dx}, {}, {[](OpKind) { return true; }}, options);
    int attentions = 0, grads = 0;
    const Graph& g = *program.module.graph;
    for (int32_t id : live_nodes(g, program.module.output_values())) {
      const Node& node = g.node(id);
      attentions += node.op == OpKind::attention;
      grads += node.op == OpKind::attention_grad;
      EXPECT_LT(shape_numel(node.shape), kBatch * kHeads * kSeq * kSeq)
          << op_name(node.op) << " " << shape_str(node.shape);
      if (bf16 && (node.op == OpKind::attention || node.op == OpKind::attention_grad)) {
        EXPECT_EQ(node.dtype, DType::f32);
        EXPECT_EQ(g.node(node.inputs[0]).dtype, DType::bf16);
      }
    }
    EXPECT_EQ(attentions, 1);
    EXPECT_EQ(grads, 1);
  }
}

// The CPU kernels against the reference at BERT-large's head shape (head 64, seq 512, two heads
// of two examples with padding and dropout 0.1), and at sizes that leave edges past every register
// tile of the f32 block products (45 rows and keys, head 40: AVX2's 6 x 16 tiles, AVX-512's
// 8 x 32): f32 operands, and bf16 operands with an f32 result (what the bf16 pass makes).
// Tolerances: f32 sums of 512 terms; bf16 the probabilities and score gradients rounded to bf16
// before their products.
TEST(AttentionFused, CpuKernelsMatchReference) {
  struct Size {
    int64_t batch, heads, seq, head_size, keys_kept;
  };
  for (Size size : {Size{2, 2, 512, 64, 300}, Size{2, 3, 45, 40, 31}}) {
    for (DType dtype : {DType::f32, DType::bf16}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " seq " + std::to_string(size.seq));
      Graph graph;
      Feeds in(graph, 5);
      Shape shape{size.batch, size.heads, size.seq, size.head_size};
      Value q = in.any(dtype, shape, -1.5, 1.5), k = in.any(dtype, shape, -1.5, 1.5);
      Value v = in.any(dtype, shape);
      Tensor padding(DType::f32, {size.batch, 1, 1, size.seq});
      for (int64_t j = 0; j < size.seq; ++j) {
        padding.set(size.seq + j, j < size.keys_kept ? 0.0 : -3.4e38);
      }
      Value mask = in.tensor(padding);
      AttentionDropout drop{in.scalar(DType::i64, 99),
                            in.integers(DType::i64, {size.batch}, 0, 9), 0.1, 2};
      Value out = attention(q, k, v, mask, 0.125, drop, DType::f32);
      Value dout = in.any(dtype, shape);
      Value grads = attention_grad(q, k, v, mask, out, dout, 0.125, drop, DType::f32);
      std::vector<Value> outputs = {out, grads};
      std::vector<Tensor> expected = evaluate_reference(graph, outputs, in.arguments());
      std::vector<Tensor> actual =
          make_cpu_backend()->compile(graph, outputs)->run(in.arguments());
      double tol = dtype == DType::f32 ? 2e-5 : 1e-2;
      EXPECT_ALLCLOSE(actual[0], expected[0], tol, tol);
      EXPECT_ALLCLOSE(actual[1], expected[1], tol, tol);
    }
  }
}

// seq_first operands ([B, S, H, D]) give, on the CPU, exactly the heads_first result of the same
// values transposed: the kernels pack the same rows through another stride. Past the 64-row
// blocks, with padding and dropout, f32 and bf16 operands (f32 results, as the bf16 pass makes).
TEST(AttentionFused, CpuSeqFirstIsHeadsFirstTransposedBitForBit) {
  constexpr int64_t kBatch = 2, kHeads = 3, kSeq = 70, kHeadSize = 16;
  const Axes swap{0, 2, 1, 3};
  for (DType dtype : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(dtype));
    Graph graph;
    Feeds in(graph, 21);
    Shape shape{kBatch, kSeq, kHeads, kHeadSize};
    Value q = in.any(dtype, shape, -1.5, 1.5), k = in.any(dtype, shape, -1.5, 1.5);
    Value v = in.any(dtype, shape), dout = in.any(dtype, shape);
    Value mask = in.any(DType::f32, {kBatch, 1, 1, kSeq}, -3.0, 0.0);
    AttentionDropout drop{in.scalar(DType::i64, 7), in.integers(DType::i64, {kBatch}, 0, 9), 0.2,
                          4};
    Value out = attention(q, k, v, mask, 0.25, drop, DType::f32, AttentionLayout::seq_first);
    Value grads = attention_grad(q, k, v, mask, out, dout, 0.25, drop, DType::f32,
                                 AttentionLayout::seq_first);
    Value out_h = attention(transpose(q, swap), transpose(k, swap), transpose(v, swap), mask, 0.25,
                            drop, DType::f32);
    Value grads_h = attention_grad(transpose(q, swap), transpose(k, swap), transpose(v, swap), mask,
                                   transpose(out, swap), transpose(dout, swap), 0.25, drop,
                                   DType::f32);
    std::vector<Value> outputs = {out, transpose(out_h, swap)};
    int64_t size = shape_numel(shape);
    for (int64_t i = 0; i < 3; ++i) {
      outputs.push_back(slice(grads, {i * size}, {(i + 1) * size}));
      Value part = reshape(slice(grads_h, {i * size}, {(i + 1) * size}),
                           {kBatch, kHeads, kSeq, kHeadSize});
      outputs.push_back(reshape(transpose(part, swap), {size}));
    }
    std::vector<Tensor> results = make_cpu_backend()->compile(graph, outputs)->run(in.arguments());
    for (size_t i = 0; i < results.size(); i += 2) {
      SCOPED_TRACE(i == 0 ? "output" : "gradient " + std::to_string(i / 2 - 1));
      EXPECT_ALLCLOSE(results[i], results[i + 1], 0.0, 0.0);
    }
  }
}

}  // namespace
}  // namespace kiln
