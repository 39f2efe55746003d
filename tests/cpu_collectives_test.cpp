// The CPU backend's all_reduce across processes (backends/cpu/collectives.h), with a stand-in
// communicator of two processes whose other process holds the same values: a sum is then twice
// this process's values, made at wait() so that a kernel reading a sum before its wait reads the
// wrong numbers. A training step on two such processes, each with the whole batch, is the step
// of one process on that batch; gradients go out in buckets of at most 25 MB, several before the
// first is waited for (the backward pass goes on meanwhile).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert.h"
#include "kiln/train/train_step.h"
#include "support/testing.h"

namespace kiln {
namespace {

// What the stand-in saw: the bytes of each all-reduce, and when the step waited for it.
struct Event {
  bool start = true;  // all_reduce_sum called; false: its wait()
  int64_t bytes = 0;
};

class TwinCommunicator : public dist::Communicator {
 public:
  class Sum : public dist::Work {
   public:
    Sum(TwinCommunicator& owner, void* data, int64_t count, DType dtype)
        : owner_(owner), data_(data), count_(count), dtype_(dtype) {}
    void wait() override {
      owner_.events.push_back({false, count_ * static_cast<int64_t>(dtype_size(dtype_))});
      ASSERT_EQ(dtype_, DType::f32);
      auto* values = static_cast<float*>(data_);
      for (int64_t i = 0; i < count_; ++i) values[i] *= 2.0f;
    }

   private:
    TwinCommunicator& owner_;
    void* data_;
    int64_t count_;
    DType dtype_;
  };

  int rank() const override { return 0; }
  int size() const override { return 2; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 2; }
  std::string backend() const override { return "twin"; }
  std::unique_ptr<dist::Work> all_reduce_sum(void* data, int64_t count, DType dtype) override {
    events.push_back({true, count * static_cast<int64_t>(dtype_size(dtype))});
    return std::make_unique<Sum>(*this, data, count, dtype);
  }
  void broadcast(void*, int64_t, int) override {}
  void barrier() override {}
  std::vector<std::string> all_gather(const std::string& bytes) override { return {bytes, bytes}; }
  void set_timeout(double) override {}
  dist::CommStats stats() const override { return {}; }

  std::vector<Event> events;
};

struct Outcome {
  double loss = 0.0, grad_norm = 0.0;
  TensorMap params;
};

// Two updates of BERT-mini classification (dropout on, clipping) on `processes` processes of
// `backend`, each with the same batch.
Outcome train(Backend& backend, int processes) {
  BertConfig config = bert_config_preset("mini");
  Graph graph;
  BertClassifier model =
      bert_for_sequence_classification(graph, config, {.batch_size = 4, .seq_len = 16,
                                                       .training = true});
  model.params.initialize(3);
  TrainStepConfig step_config;
  step_config.max_grad_norm = 1.0;
  step_config.processes = processes;
  Runtime runtime(backend);
  Value loss_count = full(graph, 4.0, DType::f32, {});
  const std::vector<Value> params = model.params.values();
  TrainStep step(graph, model.loss, params, std::vector<bool>(params.size(), true), step_config,
                 runtime, loss_count);
  TrainState state(runtime, model.params.state_dict());
  std::mt19937_64 rng(5);
  Tensor ids(DType::i64, {4, 16}), types(DType::i64, {4, 16}), mask(DType::i64, {4, 16});
  for (int64_t i = 0; i < ids.numel(); ++i) {
    ids.set(i, static_cast<double>(1 + rng() % 1000));
    mask.set(i, i % 16 < 12 ? 1.0 : 0.0);
  }
  Tensor labels(DType::i64, {4});
  for (int64_t i = 0; i < 4; ++i) labels.set(i, static_cast<double>(i % 2));
  TensorMap feeds = {{"input_ids", ids}, {"token_type_ids", types}, {"attention_mask", mask},
                     {"labels", labels},
                     {"dropout_seed", Tensor::scalar(DType::i64, 7.0)},
                     {"dropout_offset", Tensor(DType::i64, {4})}};
  Outcome out;
  for (int update = 0; update < 2; ++update) {
    StepResult result = step.update(state, {feeds}, 1e-3).result();
    out.loss = result.loss;
    out.grad_norm = result.grad_norm;
  }
  out.params = state.params();
  return out;
}

TEST(CpuCollectives, TwoProcessesWithOneBatchTrainAsOne) {
  TwinCommunicator twin;
  auto two = make_cpu_backend({.communicator = &twin});
  auto one = make_cpu_backend();
  Outcome reduced = train(*two, 2);
  Outcome single = train(*one, 1);
  EXPECT_NEAR(reduced.loss, single.loss, 1e-6 * std::abs(single.loss));
  EXPECT_NEAR(reduced.grad_norm, single.grad_norm, 1e-5 * single.grad_norm);
  for (const auto& [name, value] : single.params) {
    SCOPED_TRACE(name);
    EXPECT_ALLCLOSE(reduced.params.at(name), value, 1e-5, 1e-7);
  }
  // The update program's sums: the loss's count (4 bytes, read at once by the forward pass),
  // then the loss and the gradients in buckets (the loss travels with the first).
  ASSERT_FALSE(twin.events.empty());
  int64_t summed = 0, parameter_bytes = 0, largest = 0, started_before_first_wait = 0;
  bool waited = false;
  const size_t per_update = twin.events.size() / 2;
  for (size_t e = 0; e < per_update; ++e) {
    const Event& event = twin.events[e];
    if (event.start) {
      summed += event.bytes;
      largest = std::max(largest, event.bytes);
      if (!waited && event.bytes > 4) ++started_before_first_wait;
    } else if (event.bytes > 4) {
      waited = true;
    }
  }
  for (const auto& [name, value] : single.params) parameter_bytes += value.nbytes();
  EXPECT_EQ(summed, parameter_bytes + 8);
  // BERT-mini's 44 MB of gradients: the word embeddings' 31 MB alone, the rest in buckets of at
  // most 25 MB, all started before the first is waited for.
  const int64_t word_embeddings = bert_config_preset("mini").vocab_size * 256 * 4;
  EXPECT_EQ(largest, word_embeddings);
  EXPECT_GE(started_before_first_wait, 2);
}

}  // namespace
}  // namespace kiln
