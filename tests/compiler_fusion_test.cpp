// Which kernel groups the fusion pass forms on small graphs, the order kernels run in, and which
// donations the scheduler keeps: structure only (fused execution is tested in cpu_fusion_test).
#include <gtest/gtest.h>

#include <algorithm>

#include "kiln/compiler/buffer_plan.h"
#include "kiln/compiler/pipeline.h"
#include "kiln/compiler/views.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

const BackendCapabilities kFusing{[](OpKind op) { return op != OpKind::attention; }, true, true};

Program compile(Graph& graph, const std::vector<Value>& outputs,
                const std::vector<Donation>& donations = {},
                const BackendCapabilities& capabilities = kFusing) {
  return compile_program(graph, outputs, donations, capabilities, CompileOptions{});
}

// A group as "kind: op op ... -> results", ops of the compiled module.
std::string describe(const Program& program, const KernelGroup& group) {
  const Graph& graph = *program.module.graph;
  std::string text = group.kind == KernelKind::loop   ? "loop:"
                     : group.kind == KernelKind::gemm ? "gemm:"
                                                      : "single:";
  for (int32_t id : group.nodes) text += " " + std::string(op_name(graph.node(id).op));
  text += " ->";
  for (int32_t id : group.results) text += " " + std::string(op_name(graph.node(id).op));
  return text;
}

std::vector<std::string> describe(const Program& program) {
  std::vector<std::string> groups;
  for (const KernelGroup& group : program.kernels) groups.push_back(describe(program, group));
  return groups;
}

using Groups = std::vector<std::string>;

// Every value a kernel reads from memory is written by an earlier kernel (or is an input or a
// constant): the order respects the data flow.
void expect_data_flow_order(const Program& program) {
  const Graph& graph = *program.module.graph;
  std::vector<bool> ready(static_cast<size_t>(graph.size()), false);
  for (int32_t id = 0; id < graph.size(); ++id) {
    OpKind op = graph.node(id).op;
    ready[static_cast<size_t>(id)] = op == OpKind::input || op == OpKind::constant;
  }
  auto root = [&](int32_t id) { return view_root(graph, id); };
  for (const KernelGroup& group : program.kernels) {
    for (int32_t id : group.nodes) {
      for (int32_t operand : graph.node(id).inputs) {
        int32_t source = root(operand);
        // Values of the group, and its broadcasts (whose operands are checked in turn).
        bool inside =
            std::find(group.nodes.begin(), group.nodes.end(), source) != group.nodes.end();
        EXPECT_TRUE(inside || ready[static_cast<size_t>(source)])
            << describe(program, group) << " reads %" << source << " before it is written";
      }
    }
    for (int32_t id : written_nodes(group)) ready[static_cast<size_t>(id)] = true;
  }
}

TEST(CompilerFusion, ElementwiseChainIsOneLoopWithOneResult) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {8, 16});
  Value y = exp(neg(x) * 0.5) + x;
  Program program = compile(graph, {tanh(y)});
  // The scalar constant is broadcast in place: no kernel, no buffer.
  EXPECT_EQ(describe(program), (Groups{"loop: neg broadcast mul exp add tanh -> tanh"}));
}

// softmax(x) decomposed: the row max ends one loop; x - max, exp and the row sum form the next
// (exp is a result too); the division reads the sums through a broadcast in a third.
TEST(CompilerFusion, ReductionsEndRowsAndBroadcastsOfThemStartNewGroups) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {4, 32});
  Value max = reduce_max(x, {1}, true);
  Value e = exp(x - broadcast_to(max, x.shape()));
  Value sum = reduce_sum(e, {1}, true);
  Program program = compile(graph, {e / broadcast_to(sum, x.shape())});
  EXPECT_EQ(describe(program), (Groups{"loop: reduce_max -> reduce_max",
                                       "loop: broadcast sub exp reduce_sum -> exp reduce_sum",
                                       "loop: broadcast div -> div"}));
  expect_data_flow_order(program);
}

// A sum over leading axes (a bias gradient) joins the loop of its operand, which then stores
// nothing it does not have to; a row reduction of the same values does not join it (rows align
// blocks, columns gather over each thread's range), and a maximum over leading axes, or a sum
// over more than 2^16 columns, is a kernel of its own.
TEST(CompilerFusion, ColumnSumsJoinTheirLoopButNotRowReductions) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {4, 32});
  Value square = x * x;
  Program fused = compile(graph, {reduce_sum(square, {0})});
  EXPECT_EQ(describe(fused), (Groups{"loop: mul reduce_sum -> reduce_sum"}));
  Program both = compile(graph, {reduce_sum(square, {0}), reduce_sum(square, {1})});
  EXPECT_EQ(describe(both), (Groups{"loop: mul reduce_sum -> mul reduce_sum",
                                    "loop: reduce_sum -> reduce_sum"}));
  expect_data_flow_order(both);
  Program maximum = compile(graph, {reduce_max(square, {0})});
  EXPECT_EQ(describe(maximum), (Groups{"loop: mul -> mul", "single: reduce_max -> reduce_max"}));
  Value wide = graph.input("wide", DType::f32, {2, 1 << 17});  // too many columns to keep
  EXPECT_EQ(describe(compile(graph, {reduce_sum(wide * wide, {0})})),
            (Groups{"loop: mul -> mul", "single: reduce_sum -> reduce_sum"}));
}

// dot + bias + gelu is one gemm kernel; when the pre-activation is read again (as backward does)
// the epilogue stops there and gelu runs in a loop.
TEST(CompilerFusion, GemmEpiloguesStopAtValuesReadElsewhere) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {6, 8});
  Value w = graph.input("w", DType::f32, {8, 4});
  Value b = graph.input("b", DType::f32, {4});
  Value pre = matmul(x, w) + broadcast_to(b, {6, 4});
  Program fused = compile(graph, {gelu(pre)});
  EXPECT_EQ(describe(fused), (Groups{"gemm: dot_general broadcast add gelu -> gelu"}));
  Program split = compile(graph, {gelu(pre), pre * pre});
  EXPECT_EQ(describe(split), (Groups{"gemm: dot_general broadcast add -> add",
                                     "loop: gelu mul -> gelu mul"}));
}

// A cast of the f32 product to bf16 (--bf16's attention operands), also through a reshape, ends
// the epilogue: the product is stored rounded. Not when the f32 product is read elsewhere, nor a
// cast to another dtype; nothing joins after the cast (it would round twice).
TEST(CompilerFusion, GemmEpiloguesEndInACastToBf16) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {6, 8});
  Value w = graph.input("w", DType::f32, {8, 4});
  Value b = graph.input("b", DType::f32, {4});
  Value pre = matmul(x, w) + broadcast_to(b, {6, 4});
  Value heads = cast(reshape(pre, {6, 2, 2}), DType::bf16);
  EXPECT_EQ(describe(compile(graph, {heads})),
            (Groups{"gemm: dot_general broadcast add cast -> cast"}));
  EXPECT_EQ(describe(compile(graph, {heads, pre * pre})),
            (Groups{"gemm: dot_general broadcast add -> add", "loop: cast mul -> cast mul"}));
  EXPECT_EQ(describe(compile(graph, {cast(pre, DType::f16)})),
            (Groups{"gemm: dot_general broadcast add -> add", "loop: cast -> cast"}));
  Value doubled = cast(pre, DType::bf16) * 2.0;
  EXPECT_EQ(describe(compile(graph, {doubled})),
            (Groups{"gemm: dot_general broadcast add cast -> cast", "loop: broadcast mul -> mul"}));
}

// A broadcast read by a matrix multiply (no loop) is materialised by its own kernel, which loops
// reading it then read like any buffer.
TEST(CompilerFusion, BroadcastsReadOutsideLoopsAreMaterialised) {
  Graph graph;
  Value v = graph.input("v", DType::f32, {4});
  Value w = graph.input("w", DType::f32, {4, 4});
  Value wide = broadcast_to(v, {4, 4});
  Program program = compile(graph, {matmul(wide, w), exp(wide)});
  EXPECT_EQ(describe(program), (Groups{"single: broadcast -> broadcast",
                                       "gemm: dot_general -> dot_general",
                                       "loop: exp -> exp"}));
}

// y = exp(x) feeds a transpose whose result is added back to y: the add cannot join y's group
// (it would need the transpose, which needs the group): groups never form a cycle.
TEST(CompilerFusion, JoinsThatWouldFormACycleAreRefused) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {8, 8});
  Value y = exp(x);
  Program program = compile(graph, {y + transpose(y, {1, 0})});
  EXPECT_EQ(describe(program), (Groups{"loop: exp -> exp", "single: transpose -> transpose",
                                       "loop: add -> add"}));
  expect_data_flow_order(program);
}

// Siblings over the same index space (a dropout mask's random bits, two products of one operand)
// join the last group made.
TEST(CompilerFusion, SiblingsJoinTheLastGroup) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {16, 16});
  Value seed = graph.input("seed", DType::i64, {});
  Value offset = graph.input("offset", DType::i64, {});
  Value a = exp(x);
  Value bits = random_bits(seed, offset, {16, 16}, 3);
  Value kept = select(ge(bits, full(graph, 1u << 30, DType::u32, {16, 16})), a, zeros_like(a));
  Program program = compile(graph, {kept, tanh(x)});
  ASSERT_EQ(program.kernels.size(), 1u);
  EXPECT_EQ(program.kernels[0].kind, KernelKind::loop);
  EXPECT_EQ(program.kernels[0].results.size(), 2u);  // the select and the tanh
}

TEST(CompilerFusion, OffOrWithoutCapabilitiesEveryNodeIsAKernel) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {8});
  Value y = exp(x * 2.0);
  CompileOptions off;
  off.disable("fusion");
  Program unfused = compile_program(graph, {y}, {}, kFusing, off);
  EXPECT_EQ(describe(unfused), (Groups{"single: broadcast -> broadcast", "single: mul -> mul",
                                       "single: exp -> exp"}));
  BackendCapabilities plain{kFusing.runs_composite, false, false};
  EXPECT_EQ(describe(compile(graph, {y}, {}, plain)), describe(unfused));
}

// p' = p - 0.1 * g where g = w^T-ish product reads p too: the update kernel overwrites p, so the
// kernel reading p through the matrix multiply must run first; the loop reading p element by
// element in the update itself is safe.
// A collective is a kernel of its own (the backend's communicator call): elementwise nodes on
// either side of it form loops of their own.
TEST(CompilerFusion, CollectivesAreNeverFused) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {8, 16});
  Value y = exp(all_reduce(exp(x))) + x;
  EXPECT_EQ(describe(compile(graph, {y})),
            (Groups{"loop: exp -> exp", "single: all_reduce -> all_reduce",
                    "loop: exp add -> add"}));
}

// Every replica must meet the collectives in the same order: kernels keep them in node order,
// and a donation that would need the second to run first is dropped instead.
TEST(CompilerFusion, CollectivesKeepTheirOrder) {
  Graph graph;
  Value p = graph.input("p", DType::f32, {4, 4});
  Value first = all_reduce(p * 2.0);  // writes the output p is donated to
  Value second = all_reduce(p);       // reads p
  Program program = compile(graph, {first, second}, {{0, 0}});
  EXPECT_TRUE(program.donations.empty());
  ASSERT_EQ(describe(program),
            (Groups{"loop: broadcast mul -> mul", "single: all_reduce -> all_reduce",
                    "single: all_reduce -> all_reduce"}));
  EXPECT_EQ(program.kernels[1].nodes.back(), program.module.outputs[0]);
  EXPECT_EQ(program.kernels[2].nodes.back(), program.module.outputs[1]);
  expect_data_flow_order(program);
}

// A contiguous slice is a view (no kernel): a node reading one joins no group made before the
// view's root. Here the root is a product of the exp's result: the add joining the exp's group
// would make the two kernels read each other's results.
TEST(CompilerFusion, ViewsAreReadFromTheirRootsBuffer) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {4, 4});
  Value w = graph.input("w", DType::f32, {8, 4});
  Value a = exp(x);
  Value product = matmul(w, a);
  Value sum = a + slice(product, {0, 0}, {4, 4});
  Program program = compile(graph, {sum});
  EXPECT_EQ(describe(program), (Groups{"loop: exp -> exp", "gemm: dot_general -> dot_general",
                                       "loop: add -> add"}));
  expect_data_flow_order(program);
}

TEST(CompilerFusion, DonatedArgumentsAreReadBeforeTheyAreOverwritten) {
  Graph graph;
  Value p = graph.input("p", DType::f32, {4, 4});
  Value q = graph.input("q", DType::f32, {4, 4});
  Value update = p - 0.1 * q;
  Value other = matmul(p, q);  // made after the update, reads p
  Program program = compile(graph, {update, other}, {{0, 0}});
  ASSERT_EQ(program.donations.size(), 1u);
  EXPECT_EQ(describe(program), (Groups{"gemm: dot_general -> dot_general",
                                       "loop: broadcast mul sub -> sub"}));
  // Read through a broadcast by its writer itself: not element by element, so dropped.
  Value row = graph.input("row", DType::f32, {4});
  Value sums = reduce_sum(broadcast_in_dim(row, {4, 4}, {0}) * q, {1});
  Program reduced = compile(graph, {sums}, {{2, 0}});
  EXPECT_EQ(describe(reduced), (Groups{"loop: broadcast mul reduce_sum -> reduce_sum"}));
  EXPECT_TRUE(reduced.donations.empty());
  // An argument that is itself an output cannot be overwritten.
  EXPECT_TRUE(compile(graph, {update, p}, {{0, 0}}).donations.empty());
}

// A reader of the donated argument that depends on the update cannot run before it: the
// donation is dropped (the output gets a buffer of its own).
TEST(CompilerFusion, UnsafeDonationsAreDropped) {
  Graph graph;
  Value p = graph.input("p", DType::f32, {4, 4});
  Value update = exp(p);
  Value later = matmul(p, update);  // reads p after the update exists
  Program program = compile(graph, {update, later}, {{0, 0}});
  EXPECT_TRUE(program.donations.empty());
  expect_data_flow_order(program);
}

}  // namespace
}  // namespace kiln
