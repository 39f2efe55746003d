// Data parallel on the XLA CPU plugin's devices (8 of them, as a TPU v3-8 has cores): a run with
// N replicas and the same global batch logs the same losses and gradient norms and ends with the
// same weights as one device (dropout on, clipping, gradient accumulation); the step compiles
// once; a checkpoint of N replicas resumes exactly; per update only the batch goes to the
// devices and a few scalars come back.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/backends/pjrt/pjrt_backend.h"
#include "pjrt_test_util.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kDevices = 8;
constexpr int64_t kGlobalBatch = 8;

// The plugin with 8 CPU devices; made once per process (the plugin's client is).
Backend* backend_with_eight_devices() {
  static std::unique_ptr<Backend> backend = [] {
    const std::string plugin = testing::cpu_plugin_path();
    if (plugin.empty()) return std::unique_ptr<Backend>();
    pjrt::DiscoverySources sources = pjrt::discovery_sources(plugin);
    return make_pjrt_backend_for(pjrt::PluginKind::cpu, sources, kDevices);
  }();
  return backend.get();
}

struct Outcome {
  std::vector<double> losses, grad_norms;
  TensorMap weights;
  int64_t compiles = 0;
  RuntimeCounters counters;
};

std::vector<double> logged(const TrainerState& state, const char* key) {
  std::vector<double> out;
  for (const nlohmann::json& entry : state.log_history) {
    if (entry.contains(key)) out.push_back(entry[key].get<double>());
  }
  return out;
}

TrainingArguments replica_args(int64_t replicas, int64_t accumulation) {
  TrainingArguments args = testing::tiny_args("unused");
  args.num_devices = replicas;
  args.per_device_train_batch_size = kGlobalBatch / replicas / accumulation;
  args.gradient_accumulation_steps = accumulation;
  args.max_grad_norm = 0.5;
  args.weight_decay = 0.01;
  args.num_train_epochs = 2;
  // Every program compiled in this process, so that compile counts compare: programs loaded
  // from a compile cache that earlier runs filled for some replica counts only would not count.
  args.compile_cache_dir = "none";
  return args;
}

Outcome train(Backend& backend, const fs::path& dir, const ClassificationDataset& data,
              TrainingArguments args, const std::optional<fs::path>& resume = std::nullopt) {
  fs::create_directories(dir);
  const fs::path vocab = testing::write_vocab(dir);
  Tokenizer tokenizer = tokenizer_load_vocab(vocab.string());
  BertConfig config = testing::tiny_config(tokenizer.vocab_size(), /*dropout=*/0.1);
  args.output_dir = (dir / "out").string();
  training_arguments_post_init(args);
  std::ostringstream log;
  Trainer trainer(args, config, testing::initial_weights(config, 7), tokenizer, backend, log);
  trainer.train(data, nullptr, resume);
  return {logged(trainer.state(), "loss"), logged(trainer.state(), "grad_norm"), trainer.weights(),
          trainer.compiles(), trainer.runtime_counters()};
}

// The attention key biases' gradients are zero but for rounding (a softmax ignores shifts), and
// replicas sum that noise in another order. AdamW's epsilon (1e-8) keeps its steps from noise
// small; optimizers that normalize by the gradient with a smaller epsilon (Adafactor's 1e-30) or
// scale it up (RMSprop: by 1 / sqrt(1 - alpha) = 10) turn the noise into real steps of either sign,
// so for them only the other parameters can be compared, and those to 1e-4: RMSprop's division by
// the root mean square of small gradients magnifies the summation order's relative 1e-7.
bool moved_by_noise(const std::string& name) {
  return name.find("attention.self.key.bias") != std::string::npos;
}

void expect_same_run(const Outcome& replicated, const Outcome& single,
                     bool normalizing_optimizer = false) {
  ASSERT_EQ(replicated.losses.size(), single.losses.size());
  ASSERT_FALSE(single.losses.empty());
  for (size_t i = 0; i < single.losses.size(); ++i) {
    SCOPED_TRACE("update " + std::to_string(i + 1));
    EXPECT_NEAR(replicated.losses[i], single.losses[i], 1e-5 * std::abs(single.losses[i]));
    EXPECT_NEAR(replicated.grad_norms[i], single.grad_norms[i],
                1e-5 * std::abs(single.grad_norms[i]));
  }
  for (const auto& [name, value] : single.weights) {
    if (normalizing_optimizer && moved_by_noise(name)) continue;
    SCOPED_TRACE(name);
    EXPECT_ALLCLOSE(replicated.weights.at(name), value, normalizing_optimizer ? 1e-4 : 1e-5, 1e-6);
  }
}

// Each test's backend (the plugin with 8 CPU devices) and scratch folder; skipped without the
// plugin.
class PjrtReplicas : public ::testing::Test {
 protected:
  void SetUp() override { KILN_SKIP_WITHOUT_CPU_PLUGIN(testing::cpu_plugin_path()); }

  // `count` sentiment examples in the scratch folder.
  ClassificationDataset examples(int64_t count) const {
    return testing::load_sentiment(testing::write_sentiment_tsv(dir / "train.tsv", count, 3));
  }

  Backend* backend = backend_with_eight_devices();
  fs::path dir = testing::scratch_folder();
};

// 30 examples in batches of 8: the last global batch of each epoch has 6 real rows, so some
// replicas hold fewer real rows than others (and at 8 replicas two hold none).
TEST_F(PjrtReplicas, AnyNumberOfReplicasTrainsAsOneDevice) {
  ASSERT_EQ(backend->devices(), kDevices);
  ClassificationDataset data = examples(30);
  for (int64_t accumulation : {1, 2}) {
    SCOPED_TRACE("gradient_accumulation_steps " + std::to_string(accumulation));
    const std::string tag = "acc" + std::to_string(accumulation);
    Outcome single = train(*backend, dir / (tag + "-1"), data, replica_args(1, accumulation));
    for (int64_t replicas : {2, 4, 8}) {
      if (kGlobalBatch / replicas / accumulation == 0) continue;
      SCOPED_TRACE(std::to_string(replicas) + " replicas");
      Outcome replicated = train(*backend, dir / (tag + "-" + std::to_string(replicas)), data,
                             replica_args(replicas, accumulation));
      expect_same_run(replicated, single);
      // One training step (and one accumulation step) for every batch shape.
      EXPECT_EQ(replicated.compiles, single.compiles);
    }
  }
}

// Every optimizer's slots live on each replica and see the summed gradients: 4 replicas train
// as one device with each of them (SGD with momentum, so that it keeps a slot), over 4 updates
// of one batch shape (one compile per run).
TEST_F(PjrtReplicas, EveryOptimizerTrainsAsOneDevice) {
  ClassificationDataset data = examples(30);
  struct Case {
    std::string optimizer, optimizer_args;
    bool normalizing;  // see moved_by_noise
  };
  for (const auto& [optimizer, optimizer_args, normalizing] :
       {Case{"adafactor", "", true}, Case{"sgd", "momentum=0.9", false},
        Case{"adagrad", "", false}, Case{"rmsprop", "", true}}) {
    SCOPED_TRACE(optimizer);
    auto run = [&](int64_t replicas) {
      TrainingArguments args = replica_args(replicas, 1);
      args.optim = optimizer;
      args.optim_args = optimizer_args;
      args.max_steps = 4;
      args.max_seq_length = 16;
      args.pad_to_max_length = true;
      return train(*backend, dir / (optimizer + std::to_string(replicas)), data, args);
    };
    expect_same_run(run(4), run(1), normalizing);
  }
}

// A run of 4 replicas resumed from its checkpoint (weights and AdamW state copied from the devices,
// uploaded again to each of them) ends with the uninterrupted run's weights, bit for bit.
TEST_F(PjrtReplicas, ACheckpointOfReplicasResumesExactly) {
  ClassificationDataset data = examples(30);
  TrainingArguments args = replica_args(4, 1);
  args.save_strategy = SaveStrategy::steps;
  args.save_steps = 3;
  Outcome straight = train(*backend, dir / "straight", data, args);
  const fs::path checkpoint = dir / "straight" / "out" / "checkpoint-3";
  ASSERT_TRUE(fs::exists(checkpoint / "optimizer.safetensors"));
  Outcome resumed = train(*backend, dir / "resumed", data, args, checkpoint);
  EXPECT_EQ(testing::weights_difference(resumed.weights, straight.weights), "");
  // The log history comes back with the checkpoint: the first 3 losses are the saved ones.
  EXPECT_EQ(resumed.losses, straight.losses);
  EXPECT_EQ(resumed.grad_norms, straight.grad_norms);
}

// Per optimizer update only the batch goes to the devices (its ids, type ids, mask, labels and
// dropout keys, and two scalars) and the loss, gradient norm and finite flag come back: the
// difference between a run of 4 updates and one of 2 is 2 updates' worth of exactly that.
TEST_F(PjrtReplicas, AnUpdateMovesOnlyTheBatchAndThreeScalars) {
  ClassificationDataset data = examples(64);
  for (int64_t replicas : {1, 4}) {
    SCOPED_TRACE(std::to_string(replicas) + " replicas");
    auto counters = [&](int64_t steps) {
      TrainingArguments args = replica_args(replicas, 1);
      args.max_steps = steps;
      args.max_seq_length = 16;
      args.pad_to_max_length = true;  // one batch shape: one program, whatever the rows
      return train(*backend, dir / (std::to_string(replicas) + "-" + std::to_string(steps)), data,
                   args)
          .counters;
    };
    RuntimeCounters two = counters(2), four = counters(4);
    // Per replica and update: [B, 16] ids, type ids and mask (i32), [B] labels (i32) and
    // dropout keys (i64), the dropout seed (i64) and the learning rate (f32), B = 8 / replicas.
    const int64_t rows = kGlobalBatch / replicas;
    const int64_t batch_bytes = 3 * rows * 16 * 4 + rows * 4 + rows * 8 + 8 + 4;
    EXPECT_EQ((four.host_to_device_bytes - two.host_to_device_bytes) / 2, replicas * batch_bytes);
    // The loss (f32), gradient norm (f32) and finite flag (bool) of one replica.
    EXPECT_EQ((four.device_to_host_bytes - two.device_to_host_bytes) / 2, 4 + 4 + 1);
  }
}

}  // namespace
}  // namespace kiln
