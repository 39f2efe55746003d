// Times one BERT training step (forward, backward, clipping, AdamW: TrainStep::update) of a preset
// config on one backend: Kiln's CPU backend or an XLA device through a PJRT plugin, so that both
// compilers run the same graph. Prints one JSON line with the median step time and tokens/s
// (wall clock: XLA runs its own threads). scripts/xla_gpu_bench.py puts it beside PyTorch.
// Usage: bench_train_step [config] [batch] [seq] [steps] [device] [pjrt_plugin]
//        device: cpu, reference, pjrt:cpu, pjrt:cuda, pjrt:tpu
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/bert_config.h"
#include "kiln/ir/error.h"
#include "kiln/models/bert.h"
#include "kiln/train/train_step.h"

namespace kiln {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::unique_ptr<Backend> backend_for(const std::string& device, const std::string& plugin) {
  if (device == "cpu") return make_cpu_backend();
  if (device == "reference") return make_reference_backend();
  pjrt::DiscoverySources sources = pjrt::discovery_sources(plugin);
  if (device == "pjrt:cuda") return make_pjrt_backend_for(pjrt::PluginKind::cuda, sources);
  if (device == "pjrt:tpu") return make_pjrt_backend_for(pjrt::PluginKind::tpu, sources);
  check(device == "pjrt:cpu", "device", "unknown device '", device, "'");
  return make_pjrt_backend_for(pjrt::PluginKind::cpu, sources);
}

TensorMap random_batch(const BertConfig& config, int64_t batch, int64_t seq, int64_t step) {
  std::mt19937_64 rng(static_cast<uint64_t>(step));
  auto integers = [&](Shape shape, int64_t high) {
    Tensor tensor(DType::i64, std::move(shape));
    std::uniform_int_distribution<int64_t> pick(0, high - 1);
    for (int64_t i = 0; i < tensor.numel(); ++i) tensor.set(i, static_cast<double>(pick(rng)));
    return tensor;
  };
  Tensor mask(DType::i64, {batch, seq});
  for (int64_t i = 0; i < mask.numel(); ++i) mask.set(i, 1.0);
  return {{"input_ids", integers({batch, seq}, config.vocab_size)},
          {"token_type_ids", integers({batch, seq}, 2)},
          {"attention_mask", mask},
          {"labels", integers({batch}, config.num_labels())},
          {"dropout_seed", Tensor::scalar(DType::i64, 42)},
          {"dropout_offset", Tensor::scalar(DType::i64, step)}};
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto arg = [&](size_t i, const char* fallback) {
    return i < args.size() ? args[i] : std::string(fallback);
  };
  std::string preset = arg(0, "tiny"), device = arg(4, "cpu"), plugin = arg(5, "");
  int64_t batch = std::stoll(arg(1, "16")), seq = std::stoll(arg(2, "128"));
  int64_t steps = std::stoll(arg(3, "10"));
  BertConfig config = bert_config_preset(preset);
  std::unique_ptr<Backend> backend = backend_for(device, plugin);

  Graph graph;
  BertBuildOptions options{.batch_size = batch, .seq_len = seq, .training = true};
  BertClassifier model = bert_for_sequence_classification(graph, config, options);
  model.params.initialize(1);
  TrainStep step(graph, model.loss, model.params.values(), model.params.decay_flags(),
                 TrainStepConfig{.adamw = {.weight_decay = 0.01}, .max_grad_norm = 1.0},
                 *backend);
  TrainState state = TrainState::start(model.params.state_dict());

  double start = now_seconds();
  double first_loss = step.update(state, random_batch(config, batch, seq, 0), 2e-5).loss;
  double first_step = now_seconds() - start;  // compile + one step
  std::vector<double> times;
  for (int64_t s = 1; s <= steps; ++s) {
    TensorMap feeds = random_batch(config, batch, seq, s);
    double begin = now_seconds();
    step.update(state, feeds, 2e-5);
    times.push_back(now_seconds() - begin);
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  std::printf(
      "{\"runner\": \"kiln\", \"backend\": \"%s\", \"config\": \"%s\", \"batch\": %lld, "
      "\"seq\": %lld, \"steps\": %lld, \"step_ms\": %.3f, \"tokens_per_s\": %.1f, "
      "\"first_step_s\": %.3f, \"first_loss\": %.6f}\n",
      std::string(backend->name()).c_str(), preset.c_str(), static_cast<long long>(batch),
      static_cast<long long>(seq), static_cast<long long>(steps), median * 1e3,
      static_cast<double>(batch * seq) / median, first_step, first_loss);
  return 0;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  try {
    return kiln::run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_train_step: %s\n", error.what());
    return 1;
  }
}
