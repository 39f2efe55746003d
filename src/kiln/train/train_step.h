// Compiled training steps: forward, backward, global-norm gradient clipping and AdamW in one
// program, with gradient accumulation over micro-batches. Parameters and AdamW moments live in
// one TrainState keyed by parameter name, shared by the programs of every batch shape.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/runtime.h"
#include "kiln/train/adamw.h"
#include "kiln/train/checkpoint_state.h"

namespace kiln {

using TensorMap = std::map<std::string, Tensor>;

// What every step program of a run reads and writes, by Hugging Face parameter name.
struct TrainState {
  TensorMap params;
  AdamWState optimizer;  // moments and the number of updates done
  // The scaled gradients summed over the micro-batches of the update in progress; empty
  // between updates (then read as zeros).
  TensorMap gradient_sums;

  // The given parameters with zero moments and no update done.
  static TrainState start(TensorMap params);
};

struct TrainStepConfig {
  AdamWConfig adamw;
  // Above 0: the gradients are scaled by min(max_grad_norm / (norm + 1e-6), 1) where norm is
  // their global L2 norm, as torch.nn.utils.clip_grad_norm_. 0: no clipping.
  double max_grad_norm = 0.0;
  // Gradient accumulation (gradient_accumulation_steps > 1): adds a `loss_scale` input, the
  // gradient-sum inputs and the accumulate() program. Without it a step is one plain program.
  bool accumulate = false;
  // The compiler's switches (bf16 mixed precision, passes turned off for debugging).
  CompileOptions compile{};
};

// What an update reports.
struct StepResult {
  double loss = 0.0;       // the micro-batch's loss, before scaling
  double grad_norm = 0.0;  // the global gradient norm before clipping (what HF logs)
  // Empty when the loss and the gradient norm are finite. Otherwise the update was not applied
  // (parameters and optimizer state are as before) and this describes the first tensor, in
  // graph order, that holds a NaN or an infinity.
  std::string nonfinite;
};

// Arguments in `graph`'s input order, each input looked up by name in `maps` in turn; an input
// found in none is an Error naming it.
std::vector<Tensor> arguments_by_name(const Graph& graph,
                                      std::initializer_list<const TensorMap*> maps);

class TrainStep {
 public:
  // `params` are inputs of `graph` (role weight) whose names key TrainState::params; `decay[i]`
  // says whether params[i] gets weight decay. Adds the optimizer inputs, the backward graph,
  // clipping and AdamW to `graph` (which must outlive this object). Programs come from
  // `runtime`'s cache: compiled on first use, found again on every later step.
  TrainStep(Graph& graph, Value loss, const std::vector<Value>& params,
            const std::vector<bool>& decay, const TrainStepConfig& config, Runtime& runtime);

  // A micro-batch that is not the last of its update: adds the gradients of loss * loss_scale
  // to state.gradient_sums. Needs config.accumulate. Returns the (unscaled) loss.
  double accumulate(TrainState& state, const TensorMap& feeds, double loss_scale);

  // The last (or only) micro-batch of an update: the gradients of loss * loss_scale plus
  // state.gradient_sums are clipped and applied by AdamW at `learning_rate`; the sums are
  // cleared and state.optimizer.step advances. Without config.accumulate, loss_scale must be 1.
  // When the loss or the gradient norm is not finite, the program keeps the old parameters and
  // moments (a select inside the graph), the step count stays, and a diagnostic run of the
  // graph finds the first non-finite tensor for StepResult::nonfinite.
  StepResult update(TrainState& state, const TensorMap& feeds, double learning_rate,
                    double loss_scale = 1.0);

  // Other outputs of the graph (metrics, predictions) at the state's parameters.
  std::vector<Tensor> evaluate(const TrainState& state, const std::vector<Value>& outputs,
                               const TensorMap& feeds);

 private:
  // Every argument: state by name, the optimizer scalars, then `feeds`.
  std::vector<Tensor> arguments(const TrainState& state, const TensorMap& feeds,
                                double learning_rate, double loss_scale) const;
  // The index in graph_.inputs() of the input named `name`.
  int32_t input_index(const std::string& name) const;
  // train_step_nonfinite.cpp: the first input or computed tensor of the update (in graph
  // order) holding a NaN or an infinity, described for a person; compiles a program each call.
  std::string first_nonfinite(const std::vector<Tensor>& arguments);

  Graph& graph_;
  Runtime& runtime_;
  TrainStepConfig config_;
  DType dtype_ = DType::f32;
  std::vector<std::string> names_;
  std::vector<Shape> shapes_;
  Value loss_, grad_norm_;
  Value finite_;  // bool scalar: the loss and the gradient norm are finite
  std::vector<Value> new_params_, new_m_, new_v_, new_sums_;
};

}  // namespace kiln
