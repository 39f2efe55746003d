// BERT tiny trained through XLA:CPU (the PJRT backend on the xla-cpu-pjrt plugin) against Kiln's
// CPU backend, step for step: the same losses, gradient norms and weights within fp32 tolerance,
// with dropout on (the Philox bits lowered to StableHLO must equal the host's) and parameters and
// moments donated. Skipped when no CPU plugin is found.
#include <cmath>

#include "cpu_test_util.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/models/bert_config.h"
#include "kiln/models/bert.h"
#include "kiln/runtime/runtime.h"
#include "kiln/train/dropout_keys.h"
#include "kiln/train/train_step.h"
#include "pjrt_test_util.h"

namespace kiln {
namespace {

struct Trajectory {
  std::vector<StepResult> steps;
  TensorMap params;
};

// Five AdamW updates of BERT tiny with clipping, each on a new batch and dropout offset.
Trajectory train_bert_tiny(Backend& backend, bool bf16 = false) {
  constexpr int64_t kBatch = 4, kSeq = 16;
  Graph graph;
  BertConfig config = bert_config_preset("tiny");
  BertBuildOptions options{.batch_size = kBatch, .seq_len = kSeq, .training = true};
  BertClassifier model = bert_for_sequence_classification(graph, config, options);
  model.params.initialize(3);
  TrainStepConfig step_config{.optimizer = {.weight_decay = 0.01}, .max_grad_norm = 1.0};
  step_config.compile.bf16 = bf16;
  Runtime runtime(backend);
  TrainStep step(graph, model.loss, model.params.values(), model.params.decay_flags(), step_config,
                 runtime);
  TrainState state(runtime, model.params.state_dict());
  std::mt19937_64 rng(11);
  Trajectory trajectory;
  for (int64_t s = 0; s < 5; ++s) {
    Tensor mask = testing::random_integers(rng, DType::i64, {kBatch, kSeq}, 1, 2);
    for (int64_t t = kSeq - 4; t < kSeq; ++t) mask.set(t, 0.0);  // padding in the first row
    TensorMap feeds = {
        {"input_ids", testing::random_integers(rng, DType::i64, {kBatch, kSeq}, 0, 1000)},
        {"token_type_ids", testing::random_integers(rng, DType::i64, {kBatch, kSeq}, 0, 2)},
        {"attention_mask", mask},
        {"labels", testing::random_integers(rng, DType::i64, {kBatch}, 0, config.num_labels())},
        {"dropout_seed", Tensor::scalar(DType::i64, 1234)},
        {"dropout_offset", dropout_row_keys(s * 1000, kBatch, 0, kBatch)}};
    trajectory.steps.push_back(step.update(state, {feeds}, 1e-3).result());
  }
  trajectory.params = state.params();
  return trajectory;
}

TEST(PjrtBert, TrainingMatchesCpuBackendStepForStep) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  std::unique_ptr<Backend> xla = make_pjrt_backend(plugin);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  Trajectory expected = train_bert_tiny(*cpu);
  Trajectory actual = train_bert_tiny(*xla);
  for (size_t s = 0; s < expected.steps.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    EXPECT_TRUE(std::isfinite(expected.steps[s].loss));
    EXPECT_NEAR(actual.steps[s].loss, expected.steps[s].loss, 1e-5 * expected.steps[s].loss);
    EXPECT_NEAR(actual.steps[s].grad_norm, expected.steps[s].grad_norm,
                1e-4 * expected.steps[s].grad_norm);
  }
  // Five updates of lr 1e-3 move each weight by up to 5e-3; fp32 differences stay far below.
  ASSERT_EQ(actual.params.size(), expected.params.size());
  for (const auto& [name, value] : expected.params) {
    SCOPED_TRACE(name);
    EXPECT_ALLCLOSE(actual.params.at(name), value, 1e-4, 1e-5);
  }
}

// bf16 mixed precision through XLA:CPU: its dots take bf16 x bf16 -> f32 only in the layouts
// it makes itself, so the graph it gets keeps the transposes Kiln's CPU backend folds into its
// products. Same losses as the CPU backend within bf16 tolerance.
TEST(PjrtBert, Bf16TrainingRunsAndMatchesCpuBackend) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  std::unique_ptr<Backend> xla = make_pjrt_backend(plugin);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  Trajectory expected = train_bert_tiny(*cpu, true);
  Trajectory actual = train_bert_tiny(*xla, true);
  for (size_t s = 0; s < expected.steps.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    EXPECT_TRUE(std::isfinite(actual.steps[s].loss));
    EXPECT_NEAR(actual.steps[s].loss, expected.steps[s].loss, 1e-2 * expected.steps[s].loss);
  }
}

}  // namespace
}  // namespace kiln
