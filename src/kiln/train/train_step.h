// A compiled training step over a graph: loss, gradients and AdamW updates in one program, with
// parameters and optimizer state carried from one run to the next.
#pragma once

#include <memory>
#include <vector>

#include "kiln/backends/backend.h"
#include "kiln/train/adamw.h"

namespace kiln {

class TrainStep {
 public:
  // `params` are inputs of `graph` (role weight) with their initial values; `decay[i]` says
  // whether params[i] gets weight decay. Adds the optimizer inputs and the backward graph to
  // `graph`, then compiles with `backend`.
  TrainStep(Graph& graph, Value loss, const std::vector<Value>& params,
            std::vector<Tensor> initial_values, const std::vector<bool>& decay,
            const AdamWConfig& config, Backend& backend);

  // One step: `feeds` are the values of the graph's other inputs (data, seeds), in graph input
  // order. Returns the loss before the update.
  double run(const std::vector<Tensor>& feeds, double learning_rate);

  // Runs other outputs of the same graph (metrics, predictions) with the current parameters;
  // compiles a program for them on each call.
  std::vector<Tensor> evaluate(const std::vector<Value>& outputs, const std::vector<Tensor>& feeds);

  const std::vector<Tensor>& parameters() const { return values_; }
  int64_t steps_done() const { return steps_done_; }

 private:
  // The full argument list: carried values where they belong, feeds for the other inputs.
  std::vector<Tensor> assemble_arguments(const std::vector<Tensor>& feeds, double learning_rate);

  std::vector<Tensor> values_, m_, v_;
  std::vector<int32_t> param_ids_, m_ids_, v_ids_;
  int32_t lr_id_ = -1, step_id_ = -1;
  DType dtype_ = DType::f32;
  const Graph& graph_;
  Backend& backend_;
  std::unique_ptr<Executable> program_;
  int64_t steps_done_ = 0;
};

}  // namespace kiln
