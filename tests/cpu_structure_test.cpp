// The structure a BERT layer's training step compiles to on the CPU backend, asserted exactly so
// that a regression in fusion or buffer planning fails here: the number of kernels (and of each
// kind) and the planned arena bytes (kernels' per-thread scratch included, so the kernels run on
// two threads here, whatever the machine). The exact numbers are regression guards recorded from
// Kiln's own output; beside each is a check derived independently (a count of products that
// cannot fuse, the plan's live-bytes bound).
#include <omp.h>

#include "cpu_test_util.h"
#include "kiln/autodiff/grad.h"
#include "kiln/models/bert_config.h"
#include "kiln/models/bert.h"

namespace kiln {
namespace {

// Before any kernel is built (the CPU backend fixes its thread count at first use).
const bool kTwoThreads = [] {
  omp_set_num_threads(2);
  return true;
}();

// First principles for any plan: the arena holds at least the bytes live at the busiest step and
// at most every buffer side by side (64-byte aligned).
void expect_arena_within_live_bounds(CpuExecutable& executable) {
  const MemoryPlan& plan = executable.memory_plan();
  int64_t side_by_side = 0;
  for (const BufferRequest& buffer : plan.buffers) side_by_side += (buffer.bytes + 63) / 64 * 64;
  EXPECT_EQ(executable.stats().arena_bytes, plan.arena_bytes);
  EXPECT_GE(plan.arena_bytes, testing::live_bytes_bound(plan));
  EXPECT_LE(plan.arena_bytes, side_by_side);
}

TEST(CpuStructure, BertLayerTrainingStep) {
  ASSERT_TRUE(kTwoThreads);
  BertConfig config = bert_config_preset("tiny");
  config.num_hidden_layers = 1;
  config.vocab_size = 256;  // so that the layer, not the embedding gradient, sizes the arena
  Graph graph;
  BertClassifier model = bert_for_sequence_classification(
      graph, config, {.batch_size = 4, .seq_len = 32, .training = true});
  std::vector<Value> outputs = {model.loss};
  for (const Value& gradient : grad(model.loss, model.params.values())) outputs.push_back(gradient);
  auto executable = make_cpu_backend()->compile(graph, outputs);
  auto& cpu = dynamic_cast<CpuExecutable&>(*executable);
  int64_t loops = 0, gemms = 0;
  for (const KernelGroup& group : cpu.program().kernels) {
    loops += group.kind == KernelKind::loop;
    gemms += group.kind == KernelKind::gemm;
  }
  std::printf("bert layer step: %lld kernels (%lld loops, %lld gemms), arena %lld bytes\n",
              static_cast<long long>(cpu.kernel_count()), static_cast<long long>(loops),
              static_cast<long long>(gemms), static_cast<long long>(cpu.stats().arena_bytes));
  // Regression guards (recorded from this test's output): any change to fusion moves them.
  // 93 kernels (43 loops) before layer_norm's and dropout's gradients were ops of their own; 82
  // before attention read q, k and v seq_first (no transposes of q, k, v, the output, the
  // cotangent and dq, dk, dv); 74 (arena 1442304) before contiguous slices were views of their
  // operand's bytes (dq, dk and dv among them: their [dq | dk | dv] buffer now lives until the last
  // of them is read); arena 1443328 before each layer norm's dx, d gamma and d beta came from one
  // kernel (its [dx | d gamma | d beta] buffer lives while dx is read; a copy of [d gamma |
  // d beta], a kernel of its own, takes the place of the other kernel).
  EXPECT_EQ(cpu.kernel_count(), 64);
  EXPECT_EQ(loops, 20);
  EXPECT_EQ(gemms, 24);
  EXPECT_EQ(cpu.stats().arena_bytes, 1444352);
  // Independent: the step has 8 matrix products forward (query, key, value, attention output,
  // intermediate, output, pooler and classifier dense layers) and, for each, one per operand in
  // the backward (every operand needs a gradient: the embeddings are parameters too): 24, and no
  // two products fuse into one kernel. Attention's own products run inside its two kernels.
  EXPECT_EQ(gemms, 8 * 3);
  expect_arena_within_live_bounds(cpu);
  // Without fusion: one kernel per node that computes something.
  CompileSpec unfused;
  unfused.options.disable("fusion");
  auto plain = make_cpu_backend()->compile(graph, outputs, unfused);
  std::printf("unfused: %lld kernels, arena %lld bytes\n",
              static_cast<long long>(plain->stats().kernels),
              static_cast<long long>(plain->stats().arena_bytes));
  // Regression guards (recorded from this test's output).
  // 261 before gelu's gradient was one gelu_grad node, 244 before layer_norm's and dropout's
  // gradients were ops of their own, 136 before attention read its operands seq_first, 128 (arena
  // 1442304) before contiguous slices were views, arena 1443328 before one layer_norm_grads
  // node gave each layer norm's three gradients.
  EXPECT_EQ(plain->stats().kernels, 118);
  EXPECT_EQ(plain->stats().arena_bytes, 1444352);
  // Independent: fusion only merges kernels, so unfused there are more; each unfused kernel's
  // result is a buffer of its own, so its plan's bounds hold as well.
  EXPECT_GT(plain->stats().kernels, cpu.kernel_count());
  expect_arena_within_live_bounds(dynamic_cast<CpuExecutable&>(*plain));
}

}  // namespace
}  // namespace kiln
