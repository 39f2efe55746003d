// Common-subexpression elimination: what it merges (same op, operands, attributes, dtype and
// shape; constants with the same bytes; random bits with the same key), what it keeps apart
// (inputs, other attributes, operand order, other bytes), that inputs and outputs keep their
// order, and that the merged module computes exactly what the original does.
#include "compiler_test_util.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

using testing::count_op;

Module cse(const Graph& graph, const std::vector<Value>& outputs) {
  return eliminate_common_subexpressions(copy_module(graph, outputs, false));
}

TEST(CompilerCse, MergesRepeatedNodesAndKeepsOutputsInOrder) {
  Graph graph;
  Value unused = graph.input("unused", DType::f32, {3});
  Value x = graph.input("x", DType::f32, {3});
  Value a = exp(x) * 2.0;
  Value b = exp(x) * 2.0;  // the same exp, the same constant, the same product
  Value c = exp(x) + 1.0;
  Module module = cse(graph, {c, a, b});
  EXPECT_EQ(count_op(module, OpKind::exp), 1);
  EXPECT_EQ(count_op(module, OpKind::mul), 1);
  ASSERT_EQ(module.outputs.size(), 3u);
  EXPECT_EQ(module.outputs[1], module.outputs[2]);
  EXPECT_NE(module.outputs[0], module.outputs[1]);
  EXPECT_EQ(module.graph->node(module.outputs[0]).op, OpKind::add);
  EXPECT_EQ(testing::input_names(*module.graph), testing::input_names(graph));
  EXPECT_EQ(module.graph->inputs().size(), 2u);
  (void)unused;
}

// Two sums of the same operand over the same replicas are the same sum.
TEST(CompilerCse, CollectivesOfTheSameOperandMerge) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {3});
  Module module = cse(graph, {all_reduce(x), all_reduce(x), all_reduce(exp(x))});
  EXPECT_EQ(count_op(module, OpKind::all_reduce), 2);
  EXPECT_EQ(module.outputs[0], module.outputs[1]);
}

TEST(CompilerCse, ConstantsMergeByBytesOnly) {
  Graph graph;
  Value two = constant(graph, Tensor::scalar(DType::f32, 2.0));
  Value two_again = constant(graph, Tensor::scalar(DType::f32, 2.0));
  Value two_f64 = constant(graph, Tensor::scalar(DType::f64, 2.0));
  Value zero = constant(graph, Tensor::scalar(DType::f32, 0.0));
  Value minus_zero = constant(graph, Tensor::scalar(DType::f32, -0.0));  // equal, other bytes
  Value row = constant(graph, Tensor::from_doubles(DType::f32, {2}, {2.0, 2.0}));
  Module module = cse(graph, {two, two_again, two_f64, zero, minus_zero, row});
  EXPECT_EQ(module.outputs[0], module.outputs[1]);
  EXPECT_EQ(count_op(module, OpKind::constant), 5);
}

TEST(CompilerCse, InputsOperandOrderAndAttributesKeepNodesApart) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {2, 2});
  Value twin = graph.input("x", DType::f32, {2, 2});  // same name and type, another argument
  Module module = cse(graph, {x - twin, twin - x, reduce_sum(x, {0}), reduce_sum(x, {1}),
                              transpose(x, {1, 0}), transpose(x, {1, 0})});
  EXPECT_EQ(module.graph->inputs().size(), 2u);
  EXPECT_EQ(count_op(module, OpKind::sub), 2);
  EXPECT_EQ(count_op(module, OpKind::reduce_sum), 2);
  EXPECT_EQ(count_op(module, OpKind::transpose), 1);
}

TEST(CompilerCse, RandomBitsWithTheSameKeyAreTheSameBits) {
  Graph graph;
  Value seed = graph.input("seed", DType::i64, {});
  Value offset = graph.input("offset", DType::i64, {});
  Value other_offset = graph.input("other_offset", DType::i64, {});
  Module module = cse(graph, {random_bits(seed, offset, {8}, 3), random_bits(seed, offset, {8}, 3),
                              random_bits(seed, offset, {8}, 4),
                              random_bits(seed, other_offset, {8}, 3)});
  EXPECT_EQ(module.outputs[0], module.outputs[1]);
  EXPECT_EQ(count_op(module, OpKind::random_bits), 3);
}

TEST(CompilerCse, MergedModuleComputesExactlyTheSame) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {4, 3});
  Value w = feeds.any(DType::f32, {3, 5});
  Value h = matmul(tanh(x), w);
  Value y = reduce_sum(matmul(tanh(x), w) * h, {1}) + reduce_sum(h * h, {1});
  Module module = cse(graph, {y, h});
  EXPECT_EQ(count_op(module, OpKind::dot_general), 1);
  testing::expect_same_values(testing::run_module(module, feeds.arguments()),
                              evaluate_reference(graph, {y, h}, feeds.arguments()));
}

TEST(CompilerCse, TurnedOffTheDuplicatesStay) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {3});
  Value y = exp(x) + exp(x);
  CompileOptions options;
  options.disable("cse");
  Program program = compile_program(graph, {y}, {}, {}, options);
  EXPECT_EQ(count_op(program.module, OpKind::exp), 2);
}

}  // namespace
}  // namespace kiln
