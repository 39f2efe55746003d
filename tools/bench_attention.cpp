// Times one BERT layer's attention (q, k, v [B, S, H * D] -> heads -> attention with
// dropout 0.1 and a padding mask -> heads merged) forward and backward on the CPU backend, fused
// (the attention op and attention_grad, as multi_head_attention builds it) or unfused (softmax,
// dropout and two products, as the model spelled it out before), and prints the median step
// time, the planned arena and the process's peak RSS. One path per process, so that the peak RSS
// is that path's. BERT-large at seq 512 unless told (BERT-tiny's: batch 16, heads 2, seq 128):
//   bench_attention fused|unfused [batch=4] [f32|bf16] [steps=5] [heads=16] [seq=512]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "kiln/autodiff/grad.h"
#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/philox.h"
#include "kiln/nn/attention.h"

namespace kiln {
namespace {

constexpr int64_t kHeadSize = 64;

// Uniform values in [low, high) from Philox stream `stream`.
Tensor random_tensor(DType dtype, Shape shape, double low, double high, uint32_t stream) {
  Tensor tensor(dtype, std::move(shape));
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.set(i, low + random_bits_at(1, 0, stream, i) * 0x1p-32 * (high - low));
  }
  return tensor;
}

// The training path multi_head_attention took before the fused op.
Value unfused_attention(Value q, Value k, Value v, Value mask, int64_t heads, double scale,
                        DropoutContext& dropout) {
  q = split_heads(q, heads);
  k = split_heads(k, heads);
  v = split_heads(v, heads);
  DotAttrs qk{.lhs_batch = {0, 1}, .rhs_batch = {0, 1}, .lhs_contract = {3}, .rhs_contract = {3}};
  Value probs = dropout(softmax(dot_general(q, k, qk) * scale + mask, -1), 0.1);
  DotAttrs pv{.lhs_batch = {0, 1}, .rhs_batch = {0, 1}, .lhs_contract = {3}, .rhs_contract = {2}};
  return merge_heads(dot_general(probs, v, pv));
}

int run(bool fused, int64_t batch, bool bf16, int steps, int64_t heads, int64_t seq) {
  Graph graph;
  Shape shape{batch, seq, heads * kHeadSize};
  Value q = graph.input("q", DType::f32, shape);
  Value k = graph.input("k", DType::f32, shape);
  Value v = graph.input("v", DType::f32, shape);
  Value keep = graph.input("attention_mask", DType::f32, {batch, seq});
  Value dout = graph.input("dout", DType::f32, shape);
  DropoutContext dropout = DropoutContext::with_inputs(graph, batch);
  Value mask = extended_attention_mask(keep, DType::f32);
  double scale = 0.125;
  Value out = fused ? multi_head_attention(q, k, v, mask, heads, scale, 0.1, dropout)
                    : unfused_attention(q, k, v, mask, heads, scale, dropout);
  std::vector<Value> outputs = vjp({out}, {dout}, {q, k, v});
  outputs.push_back(out);
  CompileSpec spec;
  spec.options.bf16 = bf16;
  auto executable = make_cpu_backend()->compile(graph, outputs, spec);

  Tensor keys(DType::i64, {batch});
  for (int64_t row = 0; row < batch; ++row) keys.set(row, static_cast<double>(row));
  Tensor padding(DType::f32, {batch, seq});  // the last 7/32 of each row padding
  for (int64_t i = 0; i < padding.numel(); ++i) padding.set(i, i % seq < seq * 25 / 32 ? 1 : 0);
  std::vector<Tensor> arguments = {random_tensor(DType::f32, shape, -1, 1, 0),
                                   random_tensor(DType::f32, shape, -1, 1, 1),
                                   random_tensor(DType::f32, shape, -1, 1, 2),
                                   padding,
                                   random_tensor(DType::f32, shape, -1, 1, 3),
                                   Tensor::scalar(DType::i64, 42),
                                   keys};
  executable->run(arguments);  // warm-up
  // Wall time, and the process's CPU time (all threads), which a busy machine inflates less.
  std::vector<double> times, cpu_times;
  for (int s = 0; s < steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpu_start = std::clock();
    executable->run(arguments);
    cpu_times.push_back(static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu_times.begin(), cpu_times.end());
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("%s %s B=%lld H=%lld S=%lld D=%lld: fwd+bwd %.1f ms wall, %.1f ms CPU (medians of "
              "%d), arena %.1f MiB, peak RSS %.1f MiB\n",
              fused ? "fused" : "unfused", bf16 ? "bf16" : "f32", static_cast<long long>(batch),
              static_cast<long long>(heads), static_cast<long long>(seq),
              static_cast<long long>(kHeadSize), times[times.size() / 2] * 1e3,
              cpu_times[cpu_times.size() / 2] * 1e3, steps,
              static_cast<double>(executable->stats().arena_bytes) / (1 << 20),
              static_cast<double>(usage.ru_maxrss) / 1024.0);
  return 0;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "";
  std::string dtype = argc > 3 ? argv[3] : "f32";
  if ((path != "fused" && path != "unfused") || (dtype != "f32" && dtype != "bf16")) {
    std::fprintf(stderr, "usage: bench_attention fused|unfused [batch=4] [f32|bf16] [steps=5] "
                         "[heads=16] [seq=512]\n");
    return 2;
  }
  int64_t batch = argc > 2 ? std::atoll(argv[2]) : 4;
  bool bf16 = dtype == "bf16";
  int steps = argc > 4 ? std::atoi(argv[4]) : 5;
  int64_t heads = argc > 5 ? std::atoll(argv[5]) : 16;
  int64_t seq = argc > 6 ? std::atoll(argv[6]) : 512;
  return kiln::run(path == "fused", batch, bf16, steps, heads, seq);
}
