// Times the reference backend on a 512x512x512 f32 matmul and on one BERT-tiny training step
// (forward loss and all parameter gradients, batch 16, sequence 64, dropout on). Times are process
// CPU seconds: the backend is single-threaded, and CPU time stays meaningful on a busy machine.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/autodiff/grad.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/models/bert_config.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/philox.h"
#include "kiln/models/bert.h"

namespace kiln {
namespace {

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Uniform values in [low, high) drawn from Philox stream `stream`, so runs are reproducible.
Tensor random_tensor(DType dtype, Shape shape, double low, double high, uint32_t stream) {
  Tensor tensor(dtype, std::move(shape));
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    double unit = random_bits_at(1, 0, stream, i) * 0x1p-32;
    tensor.set(i, low + unit * (high - low));
  }
  return tensor;
}

// The best of `repeats` runs of `executable`, in seconds.
double best_time(Executable& executable, const std::vector<Tensor>& arguments, int repeats) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    double start = cpu_seconds();
    executable.run(arguments);
    best = std::min(best, cpu_seconds() - start);
  }
  return best;
}

void bench_matmul(Backend& backend, int64_t n) {
  Graph graph;
  Value a = graph.input("a", DType::f32, {n, n});
  Value b = graph.input("b", DType::f32, {n, n});
  std::unique_ptr<Executable> executable = backend.compile(graph, {matmul(a, b)});
  std::vector<Tensor> arguments = {random_tensor(DType::f32, {n, n}, -1, 1, 0),
                                   random_tensor(DType::f32, {n, n}, -1, 1, 1)};
  double seconds = best_time(*executable, arguments, 3);
  double flops = 2.0 * static_cast<double>(n * n * n);
  std::printf("matmul %lldx%lldx%lld f32: %.1f ms, %.3f GFLOP/s\n", static_cast<long long>(n),
              static_cast<long long>(n), static_cast<long long>(n), seconds * 1e3,
              flops / seconds * 1e-9);
}

void bench_bert_step(Backend& backend, int64_t batch, int64_t seq) {
  BertConfig config = bert_config_preset("tiny");
  BertBuildOptions options{.batch_size = batch, .seq_len = seq, .training = true};
  Graph graph;
  BertClassifier model = bert_for_sequence_classification(graph, config, options);
  model.params.initialize(7);
  std::vector<Value> outputs = {model.loss};
  for (const Value& gradient : grad(model.loss, model.params.values())) {
    outputs.push_back(gradient);
  }
  // Micro-step 0's dropout keys, one per row, as dropout_row_keys gives them (this tool links no
  // training code).
  Tensor dropout_keys(DType::i64, {batch});
  for (int64_t row = 0; row < batch; ++row) dropout_keys.set(row, static_cast<double>(row));
  std::map<std::string, Tensor> feeds = {
      {"input_ids", random_tensor(DType::i64, {batch, seq}, 0, config.vocab_size, 2)},
      {"token_type_ids", random_tensor(DType::i64, {batch, seq}, 0, 2, 3)},
      {"attention_mask", random_tensor(DType::i64, {batch, seq}, 1, 2, 4)},
      {"labels", random_tensor(DType::i64, {batch}, 0, config.num_labels(), 5)},
      {"dropout_seed", Tensor::scalar(DType::i64, 42)},
      {"dropout_offset", dropout_keys}};
  std::unique_ptr<Executable> executable = backend.compile(graph, outputs);
  std::vector<Tensor> arguments = model.params.arguments(feeds);
  double start = cpu_seconds();
  double loss = executable->run(arguments)[0].get(0);
  double seconds = cpu_seconds() - start;
  std::printf("bert tiny step (batch %lld, seq %lld, %d nodes): %.3f s, loss %.6f\n",
              static_cast<long long>(batch), static_cast<long long>(seq), graph.size(), seconds,
              loss);
}

}  // namespace
}  // namespace kiln

int main() {
  std::unique_ptr<kiln::Backend> backend = kiln::make_reference_backend();
  kiln::bench_matmul(*backend, 512);
  kiln::bench_bert_step(*backend, 16, 64);
  return 0;
}
