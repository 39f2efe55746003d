// The compiler pipeline as a whole: the passes run in order, each logged and each switched off by
// name, and a BERT-tiny training step (forward, backward, clipping, AdamW) compiled with every
// pass computes exactly what the graph as built computes on the reference backend.
#include <cstdio>

#include "compiler_test_util.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

using testing::BertTinyUpdate;

BackendCapabilities runs_every_composite() { return {[](OpKind) { return true; }}; }

std::vector<std::string> pass_names(const Program& program) {
  std::vector<std::string> names;
  for (const std::string& line : program.log) names.push_back(line.substr(0, line.find(':')));
  return names;
}

TEST(CompilerPipeline, RunsThePassesInOrderAndLogsEach) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {2, 3});
  Value w = graph.input("w", DType::f32, {3, 4});
  Value y = matmul(x * 1.0, w);
  CompileOptions options;
  options.bf16 = true;
  Program program = compile_program(graph, {y}, {}, runs_every_composite(), options);
  EXPECT_EQ(pass_names(program),
            (std::vector<std::string>{"decompose", "bf16", "fold", "simplify", "cse", "dce"}));
  EXPECT_EQ(program.log[1], "bf16: 6 -> 8 nodes");  // two casts added
}

TEST(CompilerPipeline, PassesTurnedOffByNameAreNotRun) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {2});
  Value y = exp(x) + exp(x);
  CompileOptions options;
  options.disable("cse,fold,simplify");
  Program program = compile_program(graph, {y}, {}, runs_every_composite(), options);
  EXPECT_EQ(pass_names(program), (std::vector<std::string>{"decompose", "dce"}));
  EXPECT_EQ(testing::count_op(program.module, OpKind::exp), 2);
  options = CompileOptions{};
  program = compile_program(graph, {y}, {}, runs_every_composite(), options);
  EXPECT_EQ(testing::count_op(program.module, OpKind::exp), 1);
}

TEST(CompilerPipeline, SemanticsOnlyKeepsThePrecisionPolicyAlone) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {2, 3});
  Value w = graph.input("w", DType::f32, {3, 4});
  Value y = matmul(x, w);
  CompileOptions options;
  options.bf16 = true;
  Program program =
      compile_program(graph, {y}, {}, runs_every_composite(), options.semantics_only());
  EXPECT_EQ(pass_names(program), (std::vector<std::string>{"decompose", "bf16"}));
}

// Every pass on against every pass off, with composites kept (as the reference capabilities
// allow) and all decomposed (as a backend without composite kernels gets them): the same values,
// bit for bit, for the loss, the norm, and every updated parameter and moment.
TEST(CompilerPipeline, BertTinyTrainingStepWithEveryPassEqualsEveryPassOff) {
  BertTinyUpdate update(2, 8);
  const testing::RecordedProgram& recorded = update.program();
  for (bool decompose_all : {false, true}) {
    SCOPED_TRACE(decompose_all ? "composites decomposed" : "composites kept");
    CompileOptions options;
    options.decompose_composites = decompose_all;
    Program optimised = compile_program(*recorded.graph, recorded.outputs,
                                        recorded.spec.donations, runs_every_composite(), options);
    Program as_built = compile_program(*recorded.graph, recorded.outputs, recorded.spec.donations,
                                       runs_every_composite(), options.semantics_only());
    // What each pass removes, for the record.
    for (const std::string& line : optimised.log) std::printf("  %s\n", line.c_str());
    EXPECT_LT(optimised.module.graph->size(), as_built.module.graph->size() * 2 / 3);
    EXPECT_EQ(testing::input_names(*optimised.module.graph),
              testing::input_names(*recorded.graph));
    testing::expect_same_values(testing::run_module(optimised.module, recorded.arguments),
                                testing::run_module(as_built.module, recorded.arguments));
  }
}

}  // namespace
}  // namespace kiln
