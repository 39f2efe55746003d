// Timings of the CPU backend, run by hand (disabled in the suite: timings never assert):
//   cpu_bench_test --gtest_also_run_disabled_tests
// A 4096x768x3072 matrix multiply through dot_general in f32 and bf16, and BERT tiny and mini
// training steps (loss and all parameter gradients), fused and unfused.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cpu_test_util.h"
#include "kiln/autodiff/grad.h"
#include "kiln/models/bert_config.h"
#include "kiln/models/bert.h"
#include "kiln/train/dropout_keys.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

// Median of `repeats` timed runs after one warm-up run, in seconds.
double median_run(Executable& executable, const std::vector<Tensor>& arguments, int repeats) {
  executable.run(arguments);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    Clock::time_point start = Clock::now();
    executable.run(arguments);
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// As a program's intermediate (only one element is returned, so the product stays in the arena)
// on its arguments, then on operands the program wrote into its 64-byte aligned arena (minus
// the time of writing them), and as the program's output (a fresh tensor each run: page faults
// and zero-filling included).
TEST(CpuBench, DISABLED_Matmul4096x768x3072) {
  const int64_t m = 4096, k = 768, n = 3072;
  double flops = 2.0 * static_cast<double>(m * k * n);
  auto corner = [](Value x) { return slice(x, {0, 0}, {1, 1}); };
  for (DType dtype : {DType::f32, DType::bf16}) {
    Graph graph;
    testing::Feeds feeds(graph);
    Value a = feeds.any(dtype, {m, k}), b = feeds.any(dtype, {k, n});
    DotAttrs mm{{}, {}, {1}, {0}};
    Value product = dot_general(a, b, mm, DType::f32);
    Value na = neg(a), nb = neg(b);
    auto backend = make_cpu_backend();
    double on_arguments = median_run(*backend->compile(graph, {corner(product)}),
                                     feeds.arguments(), 7);
    double on_arena = median_run(
        *backend->compile(graph, {corner(dot_general(na, nb, mm, DType::f32))}),
        feeds.arguments(), 7);
    on_arena -= median_run(*backend->compile(graph, {corner(na), corner(nb)}), feeds.arguments(), 7);
    double as_output = median_run(*backend->compile(graph, {product}), feeds.arguments(), 7);
    auto rate = [&](double seconds) { return flops / seconds * 1e-9; };
    std::printf("matmul %lldx%lldx%lld %s -> f32, GFLOP/s: %.0f on arguments, %.0f on aligned "
                "operands, %.0f as the output\n",
                static_cast<long long>(m), static_cast<long long>(k), static_cast<long long>(n),
                std::string(dtype_name(dtype)).c_str(), rate(on_arguments), rate(on_arena),
                rate(as_output));
  }
}

// One training step (loss and all parameter gradients) of BERT `preset` at batch 16, seq 128 (the
// issue's benchmark shape), fused and unfused, and for tiny the reference backend.
void bert_training_step(const std::string& preset) {
  const int64_t batch = 16, seq = 128;
  BertConfig config = bert_config_preset(preset);
  Graph graph;
  BertClassifier model = bert_for_sequence_classification(
      graph, config, {.batch_size = batch, .seq_len = seq, .training = true});
  model.params.initialize(7);
  std::vector<Value> outputs = {model.loss};
  for (const Value& gradient : grad(model.loss, model.params.values())) outputs.push_back(gradient);
  std::mt19937_64 rng(1);
  std::map<std::string, Tensor> feeds = {
      {"input_ids", testing::random_integers(rng, DType::i64, {batch, seq}, 0, config.vocab_size)},
      {"token_type_ids", testing::random_integers(rng, DType::i64, {batch, seq}, 0, 2)},
      {"attention_mask", testing::random_integers(rng, DType::i64, {batch, seq}, 1, 2)},
      {"labels", testing::random_integers(rng, DType::i64, {batch}, 0, config.num_labels())},
      {"dropout_seed", Tensor::scalar(DType::i64, 42)},
      {"dropout_offset", dropout_row_keys(0, batch, 0, batch)}};
  std::vector<Tensor> arguments = model.params.arguments(feeds);
  double fused_step = 0.0;
  for (bool fusion : {false, true}) {
    CompileSpec spec;
    if (!fusion) spec.options.disable("fusion");
    Clock::time_point start = Clock::now();
    auto cpu = make_cpu_backend()->compile(graph, outputs, spec);
    double compile = std::chrono::duration<double>(Clock::now() - start).count();
    double step = median_run(*cpu, arguments, 7);
    if (fusion) fused_step = step;
    std::printf("bert %s training step, batch %lld seq %lld, %s: cpu %.1f ms (compile %.1f ms, "
                "%lld kernels, arena %.1f MiB)\n",
                preset.c_str(), static_cast<long long>(batch), static_cast<long long>(seq),
                fusion ? "fused" : "unfused", step * 1e3, compile * 1e3,
                static_cast<long long>(cpu->stats().kernels),
                static_cast<double>(cpu->stats().arena_bytes) / (1 << 20));
  }
  if (preset != "tiny") return;
  auto reference = make_reference_backend()->compile(graph, outputs);
  Clock::time_point start = Clock::now();
  reference->run(arguments);
  double reference_step = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("reference %.1f ms, %.1fx the fused step\n", reference_step * 1e3,
              reference_step / fused_step);
}

TEST(CpuBench, DISABLED_BertTinyTrainingStep) { bert_training_step("tiny"); }

TEST(CpuBench, DISABLED_BertMiniTrainingStep) { bert_training_step("mini"); }

}  // namespace
}  // namespace kiln
