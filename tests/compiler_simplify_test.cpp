// Algebraic simplification: each identity replaces its node by an existing value or a single
// composed op, x * 0 and lossy double casts stay, and the simplified module computes exactly what
// the original does.
#include "compiler_test_util.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

using testing::count_op;

Module simplified(const Graph& graph, const std::vector<Value>& outputs,
                  bool fold_transposes_into_dots = true) {
  return eliminate_dead_code(
      simplify(copy_module(graph, outputs, false), fold_transposes_into_dots));
}

// The op computing output `index`.
OpKind output_op(const Module& module, size_t index) {
  return module.graph->node(module.outputs[index]).op;
}

TEST(CompilerSimplify, ArithmeticIdentitiesReturnTheOperand) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {2, 3});
  Value n = graph.input("n", DType::i32, {2});
  std::vector<Value> outputs = {x * 1.0, 1.0 * x, x / 1.0, x + 0.0, 0.0 + x, x - 0.0, -(-x),
                                n * scalar_like(n, 1.0)};
  Module module = simplified(graph, outputs);
  for (size_t i = 0; i + 1 < outputs.size(); ++i) {
    EXPECT_EQ(module.outputs[i], module.graph->inputs()[0]) << "output " << i;
  }
  EXPECT_EQ(module.outputs.back(), module.graph->inputs()[1]);
  EXPECT_EQ(module.graph->size(), 2);  // the inputs; every constant and broadcast was dead
}

TEST(CompilerSimplify, KeepsWhatIsNotAnIdentity) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {3});
  Value b = graph.input("b", DType::bf16, {3});
  // x * 0 is NaN for x = inf or NaN; 0 - x and 1 / x are other values; f32 -> bf16 -> f32 rounds.
  std::vector<Value> outputs = {x * 0.0, 0.0 - x, 1.0 / x, x * 2.0,
                                cast(cast(x, DType::bf16), DType::f32),
                                cast(cast(b, DType::f32), DType::f16)};
  Module module = simplified(graph, outputs);
  EXPECT_EQ(output_op(module, 0), OpKind::mul);
  EXPECT_EQ(output_op(module, 1), OpKind::sub);
  EXPECT_EQ(output_op(module, 2), OpKind::div);
  EXPECT_EQ(output_op(module, 3), OpKind::mul);
  EXPECT_EQ(count_op(module, OpKind::cast), 3);  // the lossless f32 step of the last one is gone
}

// all_reduce is its operand only at one replica: simplification keeps it, and the identities
// around it still apply.
TEST(CompilerSimplify, KeepsCollectives) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {3});
  Module module = simplified(graph, {all_reduce(x) * 1.0, all_reduce(x + 0.0)});
  EXPECT_EQ(output_op(module, 0), OpKind::all_reduce);
  EXPECT_EQ(output_op(module, 1), OpKind::all_reduce);
  EXPECT_EQ(module.graph->node(module.outputs[1]).inputs[0], module.graph->inputs()[0]);
}

TEST(CompilerSimplify, CastsThroughALosslessDtypeCollapse) {
  Graph graph;
  Value b = graph.input("b", DType::bf16, {3});
  Value i = graph.input("i", DType::i32, {3});
  // No builder makes a cast to the operand's own dtype.
  Value same = graph.add_node(OpKind::cast, {b}, NoAttrs{}, DType::bf16, {3});
  Module module = simplified(graph, {cast(cast(b, DType::f32), DType::bf16), same,
                                     cast(cast(i, DType::i64), DType::f32)});
  EXPECT_EQ(module.outputs[0], module.graph->inputs()[0]);
  EXPECT_EQ(module.outputs[1], module.graph->inputs()[0]);
  const Node& direct = module.graph->node(module.outputs[2]);
  EXPECT_EQ(direct.op, OpKind::cast);
  EXPECT_EQ(direct.inputs[0], module.graph->inputs()[1]);
}

TEST(CompilerSimplify, LayoutOpsComposeOrVanish) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {2, 3, 4});
  Value row = graph.input("row", DType::f32, {4});
  Value back = transpose(transpose(x, {1, 2, 0}), {2, 0, 1});
  Value turned = transpose(transpose(x, {1, 0, 2}), {0, 2, 1});
  Value flat = reshape(reshape(x, {6, 4}), {24});
  Value wide = broadcast_in_dim(broadcast_in_dim(row, {3, 4}, {1}), {2, 3, 4}, {1, 2});
  Value filled = reshape(full(graph, 2.0, DType::f32, {2, 3}), {6});
  Module module = simplified(graph, {back, turned, flat, wide, filled});
  EXPECT_EQ(module.outputs[0], module.graph->inputs()[0]);
  const Graph& g = *module.graph;
  const Node& composed = g.node(module.outputs[1]);
  ASSERT_EQ(composed.op, OpKind::transpose);
  EXPECT_EQ(composed.attr<TransposeAttrs>().perm, (Axes{1, 2, 0}));
  EXPECT_EQ(composed.inputs[0], g.inputs()[0]);
  EXPECT_EQ(g.node(module.outputs[2]).op, OpKind::reshape);
  EXPECT_EQ(g.node(module.outputs[2]).inputs[0], g.inputs()[0]);
  const Node& broadcast = g.node(module.outputs[3]);
  EXPECT_EQ(broadcast.attr<BroadcastAttrs>().dims, (Axes{2}));
  EXPECT_EQ(broadcast.inputs[0], g.inputs()[1]);
  const Node& fill = g.node(module.outputs[4]);
  EXPECT_EQ(fill.op, OpKind::broadcast);
  EXPECT_EQ(g.node(fill.inputs[0]).op, OpKind::constant);
}

TEST(CompilerSimplify, SelectsAndTrivialReductions) {
  Graph graph;
  Value a = graph.input("a", DType::f32, {2, 1, 3});
  Value b = graph.input("b", DType::f32, {2, 1, 3});
  Value p = graph.input("p", DType::boolean, {2, 1, 3});
  Value yes = full(graph, 1.0, DType::boolean, {2, 1, 3});
  Value no = full(graph, 0.0, DType::boolean, {2, 1, 3});
  Module module = simplified(graph, {select(yes, a, b), select(no, a, b), select(p, b, b),
                                     select(p, a, b), reduce_max(a, {1}), reduce_sum(a, {0, 1})});
  const Graph& g = *module.graph;
  EXPECT_EQ(module.outputs[0], g.inputs()[0]);
  EXPECT_EQ(module.outputs[1], g.inputs()[1]);
  EXPECT_EQ(module.outputs[2], g.inputs()[1]);
  EXPECT_EQ(output_op(module, 3), OpKind::select);
  EXPECT_EQ(output_op(module, 4), OpKind::reshape);     // a size-1 dim
  EXPECT_EQ(output_op(module, 5), OpKind::reduce_sum);  // dim 0 has size 2
}

TEST(CompilerSimplify, SimplifiedModuleComputesExactlyTheSame) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.with_nans(DType::f32, {2, 3});
  Value b = feeds.any(DType::bf16, {3, 2});
  Value y = transpose(transpose(x * 1.0 + 0.0, {1, 0}), {1, 0}) - 0.0;
  Value w = cast(cast(cast(b, DType::f32), DType::f64), DType::f32) * 1.0 / 1.0;
  Value z = matmul(-(-y), w);
  std::vector<Value> outputs = {y, reshape(reshape(z, {4}), {2, 2}), x * 0.0};
  Module module = simplified(graph, outputs);
  EXPECT_LT(module.graph->size(), copy_module(graph, outputs, true).graph->size());
  testing::expect_same_values(testing::run_module(module, feeds.arguments()),
                              evaluate_reference(graph, outputs, feeds.arguments()));
}

// A dot_general reads the heads of attention through their transposes (and through the casts of
// mixed precision on top): the transposes vanish, the dims are renumbered, and every value stays
// exactly the same. A transpose that would reorder a dot's free dims stays, and so do all of them
// for a backend whose products do not read strided operands (XLA through PJRT).
TEST(CompilerSimplify, DotsReadThroughTransposes) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {2, 5, 3, 4}), y = feeds.any(DType::f32, {2, 5, 3, 4});
  Value m = feeds.any(DType::f32, {3, 2, 4});
  Value q = transpose(x, {0, 2, 1, 3}), k = transpose(y, {0, 2, 1, 3});  // [2, 3, 5, 4]
  Value scores = dot_general(q, k, {{0, 1}, {0, 1}, {3}, {3}});
  Value mixed = dot_general(cast(q, DType::bf16), cast(k, DType::bf16), {{0, 1}, {0, 1}, {3}, {3}},
                            DType::f32);
  Value swapped = dot_general(transpose(m, {1, 0, 2}), m, {{}, {}, {2}, {2}});  // free (0, 1)
  std::vector<Value> outputs = {scores, mixed, swapped};
  Module module = simplified(graph, outputs);
  const Graph& g = *module.graph;
  const Node& direct = g.node(module.outputs[0]);
  EXPECT_EQ(direct.inputs[0], g.inputs()[0]);
  EXPECT_EQ(direct.inputs[1], g.inputs()[1]);
  EXPECT_EQ(direct.attr<DotAttrs>(), (DotAttrs{{0, 2}, {0, 2}, {3}, {3}}));
  const Node& through_casts = g.node(module.outputs[1]);
  EXPECT_EQ(g.node(through_casts.inputs[0]).op, OpKind::cast);
  EXPECT_EQ(g.node(through_casts.inputs[0]).inputs[0], g.inputs()[0]);
  EXPECT_EQ(count_op(module, OpKind::transpose), 1);  // the one that would swap free dims
  EXPECT_EQ(g.node(g.node(module.outputs[2]).inputs[0]).op, OpKind::transpose);
  testing::expect_same_values(testing::run_module(module, feeds.arguments()),
                              evaluate_reference(graph, outputs, feeds.arguments()));
  EXPECT_EQ(count_op(simplified(graph, outputs, false), OpKind::transpose), 3);
}

TEST(CompilerSimplify, TurnedOffIdentitiesStay) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {3});
  CompileOptions options;
  options.disable("simplify");
  EXPECT_EQ(count_op(compile_program(graph, {x * 1.0}, {}, {}, options).module, OpKind::mul), 1);
  EXPECT_EQ(count_op(compile_program(graph, {x * 1.0}, {}, {}, {}).module, OpKind::mul), 0);
}

}  // namespace
}  // namespace kiln
