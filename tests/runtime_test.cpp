// The runtime: its program cache (a hit for an equal program, a miss and the reason for a changed
// input, compiler switches or donations), the compile log lines, and the counters.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/runtime/runtime.h"
#include "kiln/train/train_step.h"

namespace kiln {
namespace {

// y = tanh(x * w) + b, built afresh in each graph with the given shapes; w is a weight.
struct SmallGraph {
  Graph graph;
  Value y;

  explicit SmallGraph(Shape x_shape, DType dtype = DType::f32) {
    Value x = graph.input("x", dtype, x_shape);
    Value w = graph.input("w", dtype, {x_shape.back()}, InputRole::weight);
    Value b = graph.input("b", dtype, {}, InputRole::data);
    y = tanh(x * w) + b;
  }
  std::vector<Tensor> arguments() const {
    std::vector<Tensor> out;
    for (int32_t id : graph.inputs()) {
      const Node& node = graph.node(id);
      out.emplace_back(node.dtype, node.shape);
    }
    return out;
  }
};

struct Logged {
  std::vector<std::string> lines;
  Runtime::Log sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

TEST(Runtime, TheSameGraphShapeIsCompiledOnce) {
  auto backend = make_cpu_backend();
  Logged log;
  Runtime runtime(*backend, log.sink());
  SmallGraph first({2, 3}), second({2, 3});  // equal programs in two graphs
  Executable& compiled = runtime.compile(first.graph, {first.y}, {}, "step");
  EXPECT_EQ(&runtime.compile(first.graph, {first.y}, {}, "step"), &compiled);
  EXPECT_EQ(&runtime.compile(second.graph, {second.y}, {}, "other name"), &compiled);
  RuntimeCounters counters = runtime.counters();
  EXPECT_EQ(counters.compiles, 1);
  EXPECT_EQ(counters.cache_hits, 2);
  EXPECT_EQ(log.lines, std::vector<std::string>{"compiling the step for x f32(2,3)"});
}

TEST(Runtime, AChangedInputShapeRecompilesAndSaysWhy) {
  auto backend = make_reference_backend();
  Logged log;
  Runtime runtime(*backend, log.sink());
  SmallGraph first({2, 3}), longer({2, 5}), other_dtype({2, 3}, DType::f64);
  Executable& a = runtime.compile(first.graph, {first.y}, {}, "step");
  Executable& b = runtime.compile(longer.graph, {longer.y}, {}, "step");
  EXPECT_NE(&a, &b);
  runtime.compile(other_dtype.graph, {other_dtype.y}, {}, "step");
  EXPECT_EQ(runtime.counters().compiles, 3);
  EXPECT_EQ(runtime.counters().cache_hits, 0);
  ASSERT_EQ(log.lines.size(), 3u);
  // x and w both changed the same way ([2, 3] -> [2, 5]: w is [3] -> [5]); named per change.
  EXPECT_EQ(log.lines[1],
            "compiling the step again: x changed from f32(2,3) to f32(2,5); w changed from "
            "f32(3) to f32(5)");
  EXPECT_EQ(log.lines[2],
            "compiling the step again: x changed from f32(2,3) to f64(2,3); w changed from f32(3) "
            "to f64(3); b changed from f32() to f64()");
}

TEST(Runtime, ExplainsAgainstTheClosestEarlierProgramOfTheFamily) {
  auto backend = make_reference_backend();
  Logged log;
  Runtime runtime(*backend, log.sink());
  SmallGraph a({2, 3}), b({4, 3}), c({4, 3, 1});
  runtime.compile(a.graph, {a.y}, {}, "step");
  runtime.compile(c.graph, {c.y}, {}, "forward");  // another family: never compared with
  runtime.compile(b.graph, {b.y}, {}, "step");
  // Another family's first compile lists its data inputs only (w is a weight; b a scalar).
  EXPECT_EQ(log.lines[1], "compiling the forward for x f32(4,3,1)");
  EXPECT_EQ(log.lines[2], "compiling the step again: x changed from f32(2,3) to f32(4,3)");

  // Inputs added and removed, against the closest of two earlier programs.
  Graph graph;
  Value x = graph.input("x", DType::f32, {4, 3});
  Value mask = graph.input("mask", DType::f32, {4, 3});
  runtime.compile(graph, {x * mask}, {}, "step");
  EXPECT_EQ(log.lines[3],
            "compiling the step again: new input mask f32(4,3); no input w (was f32(3)); no "
            "input b (was f32())");
}

TEST(Runtime, OptionsAndDonationsArePartOfTheKey) {
  auto backend = make_cpu_backend();
  Logged log;
  Runtime runtime(*backend, log.sink());
  SmallGraph small({2, 3});
  Graph& graph = small.graph;
  Value doubled = small.y * 2.0;  // [2, 3], like the donated input x
  runtime.compile(graph, {doubled}, {}, "step");
  CompileOptions no_fusion;
  no_fusion.disable("fusion");
  runtime.compile(graph, {doubled}, {no_fusion, {}}, "step");
  runtime.compile(graph, {doubled}, {{}, {{0, 0}}}, "step");
  runtime.compile(graph, {doubled}, {{}, {{0, 0}}}, "step");  // the same donation: a hit
  CompileOptions bf16;
  bf16.bf16 = true;
  runtime.compile(graph, {doubled}, {bf16, {}}, "step");
  // The same inputs but a different computation.
  runtime.compile(graph, {small.y}, {}, "step");
  EXPECT_EQ(runtime.counters().compiles, 5);
  EXPECT_EQ(runtime.counters().cache_hits, 1);
  ASSERT_EQ(log.lines.size(), 5u);
  EXPECT_EQ(log.lines[1],
            "compiling the step again: compile options changed from "
            "dce,cse,fold,simplify,fusion,inplace to dce,cse,fold,simplify,inplace");
  EXPECT_EQ(log.lines[2], "compiling the step again: donations changed");
  EXPECT_EQ(log.lines[3],
            "compiling the step again: compile options changed from "
            "dce,cse,fold,simplify,fusion,inplace to dce,cse,fold,simplify,fusion,inplace,bf16");
  EXPECT_EQ(log.lines[4],
            "compiling the step again: the graph changed (same inputs, a different computation)");
}

TEST(Runtime, CountsRunsBytesAndTheLiveExecutables) {
  auto backend = make_cpu_backend();
  Runtime runtime(*backend);
  SmallGraph small({64, 32}), other({8, 32});
  Executable& first = runtime.compile(small.graph, {small.y, small.y * small.y}, {}, "step");
  Executable& second = runtime.compile(other.graph, {other.y}, {}, "step");
  std::vector<Tensor> arguments = small.arguments();
  for (int i = 0; i < 3; ++i) first.run(arguments);
  second.run(other.arguments());
  RuntimeCounters counters = runtime.counters();
  EXPECT_EQ(counters.compiles, 2);
  EXPECT_EQ(counters.runs, 4);
  // The CPU backend computes in host memory: nothing is copied to or from a device.
  EXPECT_EQ(counters.host_to_device_bytes, 0);
  EXPECT_EQ(counters.device_to_host_bytes, 0);
  EXPECT_GE(counters.execute_ms, 0.0);
  EXPECT_GE(counters.compile_ms, 0.0);
  EXPECT_EQ(counters.kernels, first.stats().kernels + second.stats().kernels);
  EXPECT_EQ(counters.arena_bytes, first.stats().arena_bytes + second.stats().arena_bytes);
  EXPECT_GT(counters.kernels, 0);
}

TEST(Runtime, FormatsCountersOnOneLine) {
  RuntimeCounters counters;
  counters.compiles = 2;
  counters.cache_hits = 38;
  counters.compile_ms = 812.44;
  counters.runs = 40;
  counters.execute_ms = 2301.7;
  counters.host_to_device_bytes = int64_t{3} << 30;
  counters.device_to_host_bytes = 8192;
  counters.arena_bytes = 1536;
  counters.kernels = 1234;
  counters.compiled_loops = 40;
  EXPECT_EQ(format_counters(counters),
            "compiles=2 cache_hits=38 compile_ms=812.4 runs=40 execute_ms=2301.7 "
            "host_to_device=3.00GiB device_to_host=8.00KiB arena_bytes=1.50KiB kernels=1234 "
            "compiled_loops=40");
  EXPECT_EQ(format_bytes(512), "512B");
  EXPECT_EQ(format_bytes(5 << 20), "5.00MiB");
}

// Heartbeat lines counted as they arrive on the heartbeat's thread.
class HeartbeatCounter {
 public:
  void beat() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++beats_;
    arrived_.notify_all();
  }
  // Waits for `beats` lines, or a minute at most, so that a missing heartbeat fails the test
  // instead of hanging it.
  void wait_for(int beats) {
    std::unique_lock<std::mutex> lock(mutex_);
    arrived_.wait_for(lock, std::chrono::minutes(1), [&] { return beats_ >= beats; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  int beats_ = 0;
};

// A backend whose compiles last until the runtime's log has shown two heartbeat lines: a
// compile as long as the test needs.
class SlowCompileBackend final : public Backend {
 public:
  explicit SlowCompileBackend(HeartbeatCounter& heartbeats) : heartbeats_(heartbeats) {}
  std::string_view name() const override { return inner_->name(); }
  bool supports(const Node& node) const override { return inner_->supports(node); }
  std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs,
                                      const CompileSpec& spec) override {
    heartbeats_.wait_for(2);
    return inner_->compile(graph, outputs, spec);
  }

 private:
  HeartbeatCounter& heartbeats_;
  std::unique_ptr<Backend> inner_ = make_reference_backend();
};

TEST(Runtime, ALongCompileLogsAHeartbeatUntilItEnds) {
  HeartbeatCounter heartbeats;
  SlowCompileBackend backend(heartbeats);
  std::vector<std::string> lines;  // written by the heartbeat's thread while compile() blocks
  Runtime runtime(backend, [&](const std::string& line) {
    lines.push_back(line);
    if (line.starts_with("still compiling")) heartbeats.beat();
  });
  runtime.set_heartbeat_interval(0.01);
  SmallGraph small({2, 3});
  runtime.compile(small.graph, {small.y}, {}, "step");
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "compiling the step for x f32(2,3)");
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_TRUE(lines[i].starts_with("still compiling the step (")) << lines[i];
    EXPECT_TRUE(lines[i].ends_with(" s so far)")) << lines[i];
  }
}

// TrainStep finds its program in the runtime on every update after the first.
TEST(Runtime, TrainStepsCompileOnceThenHit) {
  auto backend = make_reference_backend();
  Logged log;
  Runtime runtime(*backend, log.sink());
  Graph graph;
  Value x = graph.input("x", DType::f32, {3});
  Value w = graph.input("w", DType::f32, {3}, InputRole::weight);
  Value loss = reduce_sum(w * x);
  TrainStep step(graph, loss, {w}, {true}, TrainStepConfig{}, runtime);
  TrainState state(runtime, {{"w", Tensor(DType::f32, {3})}});
  TensorMap feeds = {{"x", Tensor::from_doubles(DType::f32, {3}, {1, 2, 3})}};
  for (int i = 0; i < 4; ++i) step.update(state, {feeds}, 0.1);
  EXPECT_EQ(runtime.counters().compiles, 1);
  EXPECT_EQ(runtime.counters().cache_hits, 3);
  EXPECT_EQ(runtime.counters().runs, 4);
  EXPECT_EQ(log.lines, std::vector<std::string>{"compiling the training step for x f32(3)"});
}

}  // namespace
}  // namespace kiln
