// Structure of the CPU backend's compiled programs: the arena plan never lets two buffers that
// are live at the same step overlap, its size is what liveness allows, fused values and views
// (reshapes, contiguous slices) cost no memory, and outputs live outside the arena.
#include <algorithm>
#include <random>

#include "cpu_test_util.h"
#include "kiln/compiler/buffer_plan.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {


// Every pair of buffers with intersecting lifetimes is disjoint in memory, and inside the arena.
void expect_no_overlap(const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), plan.buffers.size());
  for (size_t a = 0; a < plan.buffers.size(); ++a) {
    const BufferRequest& x = plan.buffers[a];
    EXPECT_EQ(plan.offsets[a] % 64, 0);
    EXPECT_LE(plan.offsets[a] + x.bytes, plan.arena_bytes);
    for (size_t b = a + 1; b < plan.buffers.size(); ++b) {
      const BufferRequest& y = plan.buffers[b];
      if (x.bytes == 0 || y.bytes == 0 || x.last < y.first || y.last < x.first) continue;
      bool disjoint = plan.offsets[a] + x.bytes <= plan.offsets[b] ||
                      plan.offsets[b] + y.bytes <= plan.offsets[a];
      EXPECT_TRUE(disjoint) << "buffers " << a << " and " << b << " overlap";
    }
  }
}

TEST(CpuPlan, RandomLifetimesNeverOverlap) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<BufferRequest> requests;
    for (int i = 0; i < 200; ++i) {
      auto first = static_cast<int32_t>(rng() % 100);
      requests.push_back({static_cast<int64_t>(rng() % 5000), first,
                          first + static_cast<int32_t>(rng() % 20)});
    }
    MemoryPlan plan = plan_memory(requests);
    expect_no_overlap(plan);
    int64_t total = 0;
    for (const BufferRequest& r : requests) total += (r.bytes + 63) / 64 * 64;
    EXPECT_LE(plan.arena_bytes, total);
  }
}

CompileSpec unfused() {
  CompileSpec spec;
  spec.options.disable("fusion");
  return spec;
}

// x -> exp(x * 0.5) -> ... -> output: fused, one kernel whose values never touch memory (its only
// buffer is its scratch); unfused, each intermediate dies once the next step has read it, so the
// arena holds what is live at the busiest step.
TEST(CpuPlan, ChainIsOneKernelOrReusesBuffers) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {1024});
  for (int i = 0; i < 10; ++i) x = exp(x * 0.5);
  auto fused = make_cpu_backend()->compile(graph, {x});
  auto& one = dynamic_cast<CpuExecutable&>(*fused);
  EXPECT_EQ(one.kernel_count(), 1);
  EXPECT_EQ(one.memory_plan().buffers.size(), 1u);
  auto executable = make_cpu_backend()->compile(graph, {x}, unfused());
  auto& cpu = dynamic_cast<CpuExecutable&>(*executable);
  // 10 muls, 10 exps and one broadcast of the scalar 0.5 (cse keeps one of the ten).
  EXPECT_EQ(cpu.kernel_count(), 21);
  expect_no_overlap(cpu.memory_plan());
  EXPECT_EQ(cpu.memory_plan().arena_bytes, testing::live_bytes_bound(cpu.memory_plan()));
  testing::expect_matches_reference(graph, {x}, feeds.arguments());
}

// Reshapes alias their operand: no kernel, no buffer; an output seen through a reshape is
// written straight into the output tensor.
TEST(CpuPlan, ReshapesAreFree) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {4, 6});
  Value y = reshape(exp(reshape(neg(x), {24})), {6, 4});
  auto fused = make_cpu_backend()->compile(graph, {y});
  EXPECT_EQ(dynamic_cast<CpuExecutable&>(*fused).kernel_count(), 1);
  auto executable = make_cpu_backend()->compile(graph, {y}, unfused());
  auto& cpu = dynamic_cast<CpuExecutable&>(*executable);
  EXPECT_EQ(cpu.kernel_count(), 2);
  // neg's 96 bytes are the only intermediate (the rest is the kernels' scratch); exp's result
  // is the output.
  int64_t intermediates = 0;
  for (const BufferRequest& buffer : cpu.memory_plan().buffers) intermediates += buffer.bytes == 96;
  EXPECT_EQ(intermediates, 1);
  testing::expect_matches_reference(graph, {y}, feeds.arguments());
  testing::expect_outputs_close(fused->run(feeds.arguments()),
                                executable->run(feeds.arguments()));
}

// A slice that takes one contiguous run of its operand is a view of its bytes, as a reshape is: no
// kernel, no buffer. Other slices (a middle range of an inner dim, a stride) are copied. A view
// read only as an output is copied out after the last kernel, so its root's bytes outlive every
// kernel: the neg/mul chain made after the slices would otherwise be planned over them.
TEST(CpuPlan, ContiguousSlicesAreViews) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {12, 40, 50});  // buffers larger than the kernels' scratch
  Value y = exp(x);
  Value rows = slice(y, {2, 0, 0}, {4, 40, 50});
  Value w = exp(feeds.any(DType::f32, {2, 40, 50}));
  Value inside_a_row = slice(w, {1, 1, 0}, {2, 40, 50});
  Value columns = slice(y, {0, 0, 1}, {12, 40, 3});
  Value strided = slice(y, {0, 0, 0}, {12, 40, 50}, {2, 1, 1});
  // Contiguous but under 1/8 of y: copied, so that it would not keep y's bytes alive.
  Value small = slice(y, {11, 1, 0}, {12, 3, 50});
  // The same part of an argument, alive throughout anyway: a view.
  Value small_of_argument = neg(slice(x, {11, 1, 0}, {12, 3, 50}));
  Value negated = neg(inside_a_row);
  Value later = x;
  for (int i = 0; i < 4; ++i) later = neg(later) * 0.5;
  std::vector<Value> outputs = {rows, negated, columns, strided, small, small_of_argument, later};
  for (bool fused : {true, false}) {
    SCOPED_TRACE(fused ? "fused" : "unfused");
    auto executable = fused ? make_cpu_backend()->compile(graph, outputs)
                            : make_cpu_backend()->compile(graph, outputs, unfused());
    auto& cpu = dynamic_cast<CpuExecutable&>(*executable);
    const Graph& compiled = *cpu.program().module.graph;
    int64_t slices = 0;
    for (const KernelGroup& group : cpu.program().kernels) {
      for (int32_t id : group.nodes) slices += compiled.node(id).op == OpKind::slice;
    }
    EXPECT_EQ(slices, 3);  // columns, strided and small
    expect_no_overlap(cpu.memory_plan());
    std::vector<Tensor> expected = evaluate_reference(graph, outputs, feeds.arguments());
    testing::expect_outputs_close(executable->run(feeds.arguments()), expected);
  }
}

// An output that is a view of part of a root cannot take a donated argument's bytes (the root is
// larger): the donation is dropped and the output is copied out, right.
TEST(CpuPlan, ViewsOfPartOfARootTakeNoDonation) {
  Graph graph;
  testing::Feeds feeds(graph);
  feeds.any(DType::f32, {2, 5});  // argument 0, donated to the output
  Value q = feeds.any(DType::f32, {4, 5});
  Value head = slice(exp(q) + 1.0, {0, 0}, {2, 5});
  std::vector<Value> outputs = {head};
  std::vector<Tensor> expected = evaluate_reference(graph, outputs, feeds.arguments());
  CompileSpec spec;
  spec.donations = {{0, 0}};
  auto executable = make_cpu_backend()->compile(graph, outputs, spec);
  EXPECT_TRUE(dynamic_cast<CpuExecutable&>(*executable).program().donations.empty());
  std::vector<Tensor> arguments = {feeds.arguments()[0].clone(), feeds.arguments()[1]};
  std::vector<Tensor> results = executable->run(arguments);
  EXPECT_FALSE(results[0].shares_bytes_with(arguments[0]));
  testing::expect_outputs_close(results, expected);
}

// An executable owns what it runs: the caller's graph may go, and runs repeat exactly.
TEST(CpuPlan, ExecutableOutlivesGraphAndRepeats) {
  std::vector<Tensor> arguments;
  std::unique_ptr<Executable> executable;
  std::vector<Tensor> first;
  {
    Graph graph;
    testing::Feeds feeds(graph);
    Value x = feeds.any(DType::f32, {3, 5});
    executable = make_cpu_backend()->compile(graph, {softmax(x * 2.0), reduce_sum(x, {1})});
    arguments = feeds.arguments();
    first = executable->run(arguments);
  }
  std::vector<Tensor> second = executable->run(arguments);
  testing::expect_outputs_close(second, first, 0.0);
}

TEST(CpuPlan, ArgumentErrorsNameTheInput) {
  Graph graph;
  Value x = graph.input("tokens", DType::i32, {2, 3});
  auto executable = make_cpu_backend()->compile(graph, {x + x});
  try {
    executable->run({Tensor(DType::f32, {2, 3})});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokens"), std::string::npos) << e.what();
  }
}

// Run-time index errors are Errors naming the op, as in the reference.
TEST(CpuPlan, BadIndicesAreErrors) {
  Graph graph;
  Value table = graph.input("table", DType::f32, {4, 2});
  Value ids = graph.input("ids", DType::i32, {3});
  Value labels = graph.input("labels", DType::i64, {4});
  auto backend = make_cpu_backend();
  auto gathered = backend->compile(graph, {gather(table, ids, 0)});
  auto loss = backend->compile(graph, {cross_entropy(table, labels)});
  Tensor t(DType::f32, {4, 2});
  Tensor bad_ids = Tensor::from_doubles(DType::i32, {3}, {0, 4, 1});
  Tensor bad_labels = Tensor::from_doubles(DType::i64, {4}, {0, 1, 2, -100});
  EXPECT_THROW(gathered->run({t, bad_ids, Tensor(DType::i64, {4})}), Error);
  EXPECT_THROW(loss->run({t, Tensor(DType::i32, {3}), bad_labels}), Error);
  Value a = graph.input("a", DType::i32, {2});
  auto divide = backend->compile(graph, {a / a});
  EXPECT_THROW(divide->run({t, Tensor(DType::i32, {3}), bad_labels,
                            Tensor::from_doubles(DType::i32, {2}, {1, 0})}),
               Error);
}

}  // namespace
}  // namespace kiln
