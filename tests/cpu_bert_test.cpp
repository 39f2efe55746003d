// A whole BERT training step on the CPU backend: loss and every parameter gradient of BERT tiny
// (dropout on) equal the reference backend's within fp32 tolerance, and the compiled step's
// arena plan is sound.
#include <cmath>

#include "cpu_test_util.h"
#include "kiln/autodiff/grad.h"
#include "kiln/models/bert_config.h"
#include "kiln/models/bert.h"
#include "kiln/train/dropout_keys.h"

namespace kiln {
namespace {

struct BertStep {
  Graph graph;
  std::vector<Value> outputs;  // loss, then one gradient per parameter
  std::vector<std::string> names;
  std::vector<Tensor> arguments;
};

std::unique_ptr<BertStep> bert_tiny_step(int64_t batch, int64_t seq) {
  auto step = std::make_unique<BertStep>();
  BertConfig config = bert_config_preset("tiny");
  BertBuildOptions options{.batch_size = batch, .seq_len = seq, .training = true};
  BertClassifier model = bert_for_sequence_classification(step->graph, config, options);
  model.params.initialize(3);
  step->outputs = {model.loss};
  step->names = {"loss"};
  std::vector<Value> params = model.params.values();
  std::vector<Value> grads = grad(model.loss, params);
  for (size_t i = 0; i < params.size(); ++i) {
    step->outputs.push_back(grads[i]);
    step->names.push_back(step->graph.input_name(params[i].id()));
  }
  std::mt19937_64 rng(5);
  Tensor mask = testing::random_integers(rng, DType::i64, {batch, seq}, 1, 2);
  for (int64_t s = seq - 3; s < seq; ++s) mask.set(s, 0.0);  // padding in the first row
  std::map<std::string, Tensor> feeds = {
      {"input_ids", testing::random_integers(rng, DType::i64, {batch, seq}, 0, config.vocab_size)},
      {"token_type_ids", testing::random_integers(rng, DType::i64, {batch, seq}, 0, 2)},
      {"attention_mask", mask},
      {"labels", testing::random_integers(rng, DType::i64, {batch}, 0, config.num_labels())},
      {"dropout_seed", Tensor::scalar(DType::i64, 1234)},
      {"dropout_offset", dropout_row_keys(9, batch, 0, batch)}};
  step->arguments = model.params.arguments(feeds);
  return step;
}

double max_abs(const Tensor& t) {
  double m = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(t.get(i)));
  return m;
}

TEST(CpuBert, TrainingStepMatchesReference) {
  std::unique_ptr<BertStep> step = bert_tiny_step(2, 16);
  std::vector<Tensor> expected = evaluate_reference(step->graph, step->outputs, step->arguments);
  auto executable = make_cpu_backend()->compile(step->graph, step->outputs);
  std::vector<Tensor> actual = executable->run(step->arguments);
  ASSERT_EQ(actual.size(), expected.size());
  EXPECT_TRUE(std::isfinite(expected[0].get(0)));
  EXPECT_NEAR(actual[0].get(0), expected[0].get(0), 1e-5 * std::fabs(expected[0].get(0)));
  // Gradients: elementwise within 1e-4 relative, plus 1e-5 of the tensor's largest magnitude
  // (float sums over the batch put small entries' errors on the scale of the large ones), plus
  // 1e-9 for gradients that are zero but for rounding (the key biases': softmax ignores shifts).
  double worst = 0.0;
  for (size_t i = 1; i < actual.size(); ++i) {
    SCOPED_TRACE(step->names[i]);
    double scale = max_abs(expected[i]);
    EXPECT_ALLCLOSE(actual[i], expected[i], 1e-4, 1e-5 * scale + 1e-9);
    for (int64_t j = 0; j < actual[i].numel(); ++j) {
      double error = std::fabs(actual[i].get(j) - expected[i].get(j));
      if (scale > 1e-9) worst = std::max(worst, error / scale);
    }
  }
  std::printf("largest gradient error relative to its tensor's largest entry: %.3g\n", worst);
  // A second run of the same executable gives the same bits.
  std::vector<Tensor> again = executable->run(step->arguments);
  testing::expect_outputs_close(again, actual, 0.0);
}

TEST(CpuBert, TrainingStepPlanIsSound) {
  std::unique_ptr<BertStep> step = bert_tiny_step(2, 16);
  auto executable = make_cpu_backend()->compile(step->graph, step->outputs);
  auto& cpu = dynamic_cast<CpuExecutable&>(*executable);
  const MemoryPlan& plan = cpu.memory_plan();
  int64_t total = 0;
  int32_t steps = 0;
  for (size_t a = 0; a < plan.buffers.size(); ++a) {
    total += plan.buffers[a].bytes;
    steps = std::max(steps, plan.buffers[a].last + 1);
    EXPECT_LE(plan.offsets[a] + plan.buffers[a].bytes, plan.arena_bytes);
  }
  // No plan beats the most bytes live at one step; greedy-by-size stays close to that bound.
  int64_t bound = 0;
  for (int32_t s = 0; s < steps; ++s) {
    int64_t live = 0;
    for (const BufferRequest& b : plan.buffers) {
      if (b.first <= s && s <= b.last) live += b.bytes;
    }
    bound = std::max(bound, live);
  }
  EXPECT_GE(plan.arena_bytes, bound);
  EXPECT_LE(plan.arena_bytes, bound + bound / 4);
  EXPECT_LT(plan.arena_bytes, total);
  for (size_t a = 0; a < plan.buffers.size(); ++a) {
    for (size_t b = a + 1; b < plan.buffers.size(); ++b) {
      const auto& x = plan.buffers[a];
      const auto& y = plan.buffers[b];
      if (x.last < y.first || y.last < x.first) continue;
      ASSERT_TRUE(plan.offsets[a] + x.bytes <= plan.offsets[b] ||
                  plan.offsets[b] + y.bytes <= plan.offsets[a])
          << "live buffers " << a << " and " << b << " overlap";
    }
  }
  std::printf("bert tiny step (batch 2, seq 16): %lld kernels, %zu buffers, arena %lld bytes "
              "(live-bytes bound %lld, all intermediates %lld)\n",
              static_cast<long long>(cpu.kernel_count()), plan.buffers.size(),
              static_cast<long long>(plan.arena_bytes), static_cast<long long>(bound),
              static_cast<long long>(total));
}

}  // namespace
}  // namespace kiln
