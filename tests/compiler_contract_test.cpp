// The compiler's contract with backends and callers: pass switches by name, modules that keep
// every input in the caller's order, the donations a program honours, and a pipeline whose
// result computes what the graph computes.
#include <gtest/gtest.h>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/compiler/passes.h"
#include "kiln/compiler/pipeline.h"
#include "kiln/ir/ops.h"
#include "support/testing.h"

namespace kiln {
namespace {

BackendCapabilities no_composites() { return BackendCapabilities{[](OpKind) { return false; }}; }

TEST(CompilerOptions, DisableNamesPassesAndRejectsUnknownOnes) {
  CompileOptions options;
  options.disable("cse,fusion");
  EXPECT_FALSE(options.common_subexpressions);
  EXPECT_FALSE(options.fusion);
  EXPECT_TRUE(options.dead_code);
  EXPECT_EQ(options.key(), "dce,fold,simplify,inplace");
  std::string error = testing::error_of([&] { options.disable("dce,vectorize"); });
  EXPECT_NE(error.find("unknown pass 'vectorize'"), std::string::npos) << error;
}

TEST(CompilerOptions, SemanticsOnlyKeepsThePrecisionPolicy) {
  CompileOptions options;
  options.bf16 = true;
  CompileOptions oracle = options.semantics_only();
  EXPECT_TRUE(oracle.bf16);
  EXPECT_EQ(oracle.key(), "bf16");
  EXPECT_NE(options.key(), oracle.key());
}

TEST(CompilerModule, CopyKeepsEveryInputInOrderAndOnlyLiveNodesWhenAsked) {
  Graph graph;
  Value a = graph.input("a", DType::f32, {3});
  Value unused = graph.input("unused", DType::f32, {2});
  Value b = graph.input("b", DType::f32, {3});
  Value dead = exp(unused);
  Value out = a * b;
  Module live = copy_module(graph, {out}, true);
  Module all = copy_module(graph, {out}, false);
  ASSERT_EQ(live.graph->inputs().size(), 3u);
  EXPECT_EQ(live.graph->input_name(live.graph->inputs()[1]), "unused");
  EXPECT_EQ(live.graph->size(), 4);  // three inputs and the product
  EXPECT_EQ(all.graph->size(), graph.size());
  EXPECT_EQ(eliminate_dead_code(all).graph->size(), 4);
  (void)dead;
}

TEST(CompilerModule, RewriteThatChangesATypeNamesTheNode) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {4});
  Module module = copy_module(graph, {exp(x)}, true);
  std::string error = testing::error_of([&] {
    rewrite_module(module, [](Graph&, const Node& node, int32_t,
                              const std::vector<Value>& operands) {
      return node.op == OpKind::exp ? cast(operands[0], DType::f64) : Value();
    });
  });
  EXPECT_NE(error.find("rewrite of node %1 changed its type"), std::string::npos) << error;
}

TEST(CompilerPipeline, DecomposesWhatTheBackendCannotRunAndComputesTheSame) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {2, 5});
  Value y = softmax(x, -1);
  Program program = compile_program(graph, {y}, {}, no_composites(), CompileOptions{});
  for (const Node& node : program.module.graph->nodes()) EXPECT_NE(node.op, OpKind::softmax);
  ASSERT_FALSE(program.log.empty());
  EXPECT_EQ(program.log.front().rfind("decompose: ", 0), 0u) << program.log.front();

  std::mt19937_64 rng(3);
  Tensor input = testing::random_tensor(rng, DType::f32, {2, 5});
  Tensor expected = evaluate_reference(graph, {y}, {input})[0];
  Tensor actual =
      evaluate_reference(*program.module.graph, program.module.output_values(), {input})[0];
  EXPECT_EQ(testing::compare_tensors(actual, expected, 1e-6, 1e-7), "");
}

TEST(CompilerPipeline, HonoursOnlyDonationsOfMatchingTypeOncePerInputAndOutput) {
  Graph graph;
  Value p = graph.input("p", DType::f32, {4}, InputRole::weight);
  Value q = graph.input("q", DType::f32, {2}, InputRole::weight);
  Value updated = p - p * 0.1;
  Value total = reduce_sum(q);
  std::vector<Donation> requests = {{0, 0}, {0, 1}, {1, 1}, {1, 0}};
  // In place needs the writer to read p element by element as it writes: a loop kernel.
  BackendCapabilities loops = no_composites();
  loops.loop_fusion = true;
  Program program = compile_program(graph, {updated, total}, requests, loops, {});
  ASSERT_EQ(program.donations.size(), 1u);  // q is f32[2], the sum a scalar
  EXPECT_EQ(program.donations[0].input, 0);
  EXPECT_EQ(program.donations[0].output, 0);

  CompileOptions no_in_place;
  no_in_place.disable("inplace");
  EXPECT_TRUE(
      compile_program(graph, {updated, total}, requests, loops, no_in_place)
          .donations.empty());
  std::string error = testing::error_of(
      [&] { compile_program(graph, {updated}, {{0, 3}}, no_composites(), {}); });
  EXPECT_NE(error.find("donation of input 0 to output 3 is out of range"), std::string::npos)
      << error;
}

TEST(CompilerPipeline, WithoutDeadCodeEliminationDeadNodesStayAndGetKernels) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {8});
  Value dead = exp(x);
  Value out = neg(x);
  CompileOptions keep;
  keep.disable("dce");
  Program kept = compile_program(graph, {out}, {}, no_composites(), keep);
  Program pruned = compile_program(graph, {out}, {}, no_composites(), {});
  EXPECT_EQ(kept.kernels.size(), 2u);
  EXPECT_EQ(pruned.kernels.size(), 1u);
  (void)dead;
}

}  // namespace
}  // namespace kiln
