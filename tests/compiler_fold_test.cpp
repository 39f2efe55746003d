// Constant folding: nodes whose operands are constants or iota become constants with the values
// the reference kernels compute; random bits, dropout, iota, broadcasts, collectives and large
// results stay.
#include "compiler_test_util.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

using testing::count_op;

Module fold(const Graph& graph, const std::vector<Value>& outputs) {
  return fold_constants(copy_module(graph, outputs, false));
}

const Tensor& constant_value(const Module& module, int32_t id) {
  return module.graph->node(id).attr<ConstantAttrs>().value;
}

TEST(CompilerFold, EvaluatesConstantExpressions) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {3});
  Value five = constant(graph, Tensor::scalar(DType::f32, 2.0)) +
               constant(graph, Tensor::scalar(DType::f32, 3.0));
  Value scale = sqrt(cast(five, DType::f64));
  Value y = x * cast(scale, DType::f32);
  Module module = fold(graph, {y, scale});
  const Node& scale_node = module.graph->node(module.outputs[1]);
  ASSERT_EQ(scale_node.op, OpKind::constant);
  EXPECT_EQ(scale_node.dtype, DType::f64);
  EXPECT_EQ(constant_value(module, module.outputs[1]).get(0), std::sqrt(5.0));
  // Left: the input, the folded f32 scale, its broadcast to x's shape, the product.
  EXPECT_EQ(count_op(module, OpKind::constant), 2);
  EXPECT_EQ(count_op(module, OpKind::mul), 1);
  EXPECT_EQ(count_op(module, OpKind::add), 0);
}

TEST(CompilerFold, FoldsWhatIotaFeedsButKeepsIotaItself) {
  Graph graph;
  Value classes = iota(graph, DType::i64, {2, 3}, 1);
  Value is_one = eq(classes, constant(graph, Tensor::scalar(DType::i64, 1)));
  Module module = fold(graph, {is_one, classes});
  EXPECT_EQ(module.graph->node(module.outputs[0]).op, OpKind::constant);
  EXPECT_EQ(constant_value(module, module.outputs[0]).to_doubles(),
            (std::vector<double>{0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(module.graph->node(module.outputs[1]).op, OpKind::iota);
}

TEST(CompilerFold, LeavesRandomnessBroadcastsAndLargeResults) {
  Graph graph;
  Value seed = constant(graph, Tensor::scalar(DType::i64, 7));
  Value offset = constant(graph, Tensor::scalar(DType::i64, 0));
  Value bits = random_bits(seed, offset, {4}, 0);
  Value dropped = dropout(constant(graph, Tensor(DType::f32, {4})), seed, offset, 0.5, 1);
  Value filled = full(graph, 2.0, DType::f32, {8, 8});
  Value large = exp(constant(graph, Tensor(DType::f32, {128, 129})));  // 66,048 bytes
  Value small = exp(constant(graph, Tensor(DType::f32, {128, 128})));  // 65,536 bytes: folded
  Module module = fold(graph, {bits, dropped, filled, large, small});
  EXPECT_EQ(module.graph->node(module.outputs[0]).op, OpKind::random_bits);
  EXPECT_EQ(module.graph->node(module.outputs[1]).op, OpKind::dropout);
  EXPECT_EQ(module.graph->node(module.outputs[2]).op, OpKind::broadcast);
  EXPECT_EQ(module.graph->node(module.outputs[3]).op, OpKind::exp);
  EXPECT_EQ(module.graph->node(module.outputs[4]).op, OpKind::constant);
}

// At N replicas all_reduce(c) is N * c: neither it nor what reads it is known when compiling.
TEST(CompilerFold, NeverFoldsACollective) {
  Graph graph;
  Value c = constant(graph, Tensor::from_doubles(DType::f32, {2}, {1.5, -2.0}));
  Value summed = all_reduce(c * 2.0);
  Value after = summed + constant(graph, Tensor::scalar(DType::f32, 1.0));
  Module module = fold(graph, {summed, after});
  EXPECT_EQ(module.graph->node(module.outputs[0]).op, OpKind::all_reduce);
  EXPECT_EQ(module.graph->node(module.outputs[1]).op, OpKind::add);
  // Its operand is folded; the whole pipeline keeps the collective too.
  EXPECT_EQ(module.graph->node(module.graph->node(module.outputs[0]).inputs[0]).op,
            OpKind::constant);
  EXPECT_EQ(count_op(compile_program(graph, {after}, {}, {}, {}).module, OpKind::all_reduce), 1);
}

TEST(CompilerFold, FoldedModuleComputesExactlyTheSame) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {2, 3});
  Value table =
      constant(graph, Tensor::from_doubles(DType::f32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  Value weights = softmax(transpose(table, {1, 0}) * 0.5);  // a composite folds too
  Value picked = gather(table, constant(graph, Tensor::from_doubles(DType::i32, {2}, {2, 0})), 0);
  std::vector<Value> outputs = {matmul(x, weights), x * reduce_sum(picked, {0})};
  Module module = fold(graph, outputs);
  EXPECT_EQ(count_op(module, OpKind::softmax), 0);
  EXPECT_EQ(count_op(module, OpKind::gather), 0);
  EXPECT_EQ(testing::input_names(*module.graph), testing::input_names(graph));
  testing::expect_same_values(testing::run_module(module, feeds.arguments()),
                              evaluate_reference(graph, outputs, feeds.arguments()));
}

TEST(CompilerFold, AnErrorInAFoldedNodeNamesIt) {
  Graph graph;
  Value table = constant(graph, Tensor(DType::f32, {3, 2}));
  Value picked = gather(table, constant(graph, Tensor::scalar(DType::i32, 5)), 0);
  EXPECT_NE(testing::error_of([&] { fold(graph, {picked}); }).find("gather"), std::string::npos);
}

TEST(CompilerFold, TurnedOffConstantsStayExpressions) {
  Graph graph;
  Value y = exp(constant(graph, Tensor::scalar(DType::f32, 1.0)));
  CompileOptions options;
  options.disable("fold");
  EXPECT_EQ(count_op(compile_program(graph, {y}, {}, {}, options).module, OpKind::exp), 1);
  EXPECT_EQ(count_op(compile_program(graph, {y}, {}, {}, {}).module, OpKind::exp), 0);
}

}  // namespace
}  // namespace kiln
