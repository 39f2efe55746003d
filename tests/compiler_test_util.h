// Shared by the compiler_*_test files: a pass's module run on the reference backend against the
// original graph, and the update program of a BERT-tiny TrainStep captured as it is compiled.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/compiler/passes.h"
#include "kiln/compiler/pipeline.h"
#include "kiln/io/bert_config.h"
#include "kiln/models/bert.h"
#include "kiln/runtime/runtime.h"
#include "kiln/train/dropout_keys.h"
#include "kiln/train/train_step.h"
#include "support/testing.h"

namespace kiln::testing {

// The values a module computes, on the reference backend (which adds nothing to a module
// compiled with its own options: semantics_only of the defaults is every pass off).
inline std::vector<Tensor> run_module(const Module& module, const std::vector<Tensor>& arguments) {
  return evaluate_reference(*module.graph, module.output_values(), arguments);
}

// The input names of a graph, in argument order.
inline std::vector<std::string> input_names(const Graph& graph) {
  std::vector<std::string> names;
  for (int32_t id : graph.inputs()) names.push_back(graph.input_name(id));
  return names;
}

// Nodes of `op` among the nodes the module's outputs depend on.
inline int64_t count_op(const Module& module, OpKind op) {
  int64_t count = 0;
  for (int32_t id : live_nodes(*module.graph, module.output_values())) {
    count += module.graph->node(id).op == op;
  }
  return count;
}

// Bitwise-equal tensors, element by element (NaN equals NaN; -0 equals +0, as ==).
inline void expect_same_values(const std::vector<Tensor>& actual,
                               const std::vector<Tensor>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    EXPECT_ALLCLOSE(actual[i], expected[i], 0.0, 0.0);
  }
}

// A program as a caller handed it to Backend::compile and then ran it.
struct RecordedProgram {
  const Graph* graph = nullptr;
  std::vector<Value> outputs;
  CompileSpec spec;
  std::vector<Tensor> arguments;  // of the last run
};

// The reference backend, recording every compile and the arguments of every run.
class RecordingBackend : public Backend {
 public:
  std::string_view name() const override { return "recording"; }
  bool supports(const Node& node) const override { return reference_->supports(node); }
  std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs,
                                      const CompileSpec& spec) override {
    programs_.push_back(
        std::make_unique<RecordedProgram>(RecordedProgram{&graph, outputs, spec, {}}));
    return std::make_unique<Recorder>(reference_->compile(graph, outputs, spec),
                                      *programs_.back());
  }
  const RecordedProgram& last() const { return *programs_.back(); }
  const std::vector<std::unique_ptr<RecordedProgram>>& programs() const { return programs_; }

 private:
  class Recorder : public Executable {
   public:
    Recorder(std::unique_ptr<Executable> inner, RecordedProgram& record)
        : inner_(std::move(inner)), record_(record) {}
    std::vector<Tensor> run(const std::vector<Tensor>& arguments) override {
      // Copies: the run may consume donated arguments.
      record_.arguments.clear();
      for (const Tensor& argument : arguments) record_.arguments.push_back(argument.clone());
      return inner_->run(arguments);
    }
    ExecutableStats stats() const override { return inner_->stats(); }

   private:
    std::unique_ptr<Executable> inner_;
    RecordedProgram& record_;
  };

  std::unique_ptr<Backend> reference_ = make_reference_backend();
  std::vector<std::unique_ptr<RecordedProgram>> programs_;
};

// One update of BERT tiny (dropout on, a padded row) through TrainStep, with the update program
// (forward, backward, clipping, the optimizer: AdamW unless told) and its arguments recorded.
struct BertTinyUpdate {
  static constexpr double kLearningRate = 1e-3;
  Graph graph;
  RecordingBackend backend;
  Runtime runtime{backend};
  std::unique_ptr<TrainStep> step;
  size_t parameter_count = 0;

  BertTinyUpdate(int64_t batch, int64_t seq, const CompileOptions& options = {},
                 OptimizerConfig optimizer = {}) {
    BertConfig config = bert_config_preset("tiny");
    BertBuildOptions build{.batch_size = batch, .seq_len = seq, .training = true};
    BertClassifier model = bert_for_sequence_classification(graph, config, build);
    model.params.initialize(3);
    parameter_count = model.params.values().size();
    TrainStepConfig step_config;
    step_config.max_grad_norm = 1.0;
    optimizer.weight_decay = 0.01;
    step_config.optimizer = optimizer;
    step_config.compile = options;
    step = std::make_unique<TrainStep>(graph, model.loss, model.params.values(),
                                       model.params.decay_flags(), step_config, runtime);
    std::mt19937_64 rng(5);
    Tensor mask = random_integers(rng, DType::i64, {batch, seq}, 1, 2);
    for (int64_t s = seq - 3; s < seq; ++s) mask.set(s, 0.0);  // padding in the first row
    TensorMap feeds = {
        {"input_ids", random_integers(rng, DType::i64, {batch, seq}, 0, config.vocab_size)},
        {"token_type_ids", random_integers(rng, DType::i64, {batch, seq}, 0, 2)},
        {"attention_mask", mask},
        {"labels", random_integers(rng, DType::i64, {batch}, 0, config.num_labels())},
        {"dropout_seed", Tensor::scalar(DType::i64, 1234)},
        {"dropout_offset", dropout_row_keys(9, batch, 0, batch)}};
    TrainState state(runtime, model.params.state_dict(), 1, optimizer);
    step->update(state, {feeds}, kLearningRate).result();
  }

  const RecordedProgram& program() const { return backend.last(); }
};

}  // namespace kiln::testing
