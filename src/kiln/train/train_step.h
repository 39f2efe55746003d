// Compiled training steps: forward, backward, global-norm gradient clipping and the optimizer
// (--optim) in one program, with gradient accumulation over micro-batches and data parallel
// replicas. Parameters and the optimizer's slots live in one TrainState on the devices, keyed by parameter name, shared by
// the programs of every batch shape. Steps are queued: their scalars are read back on request.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/runtime.h"
#include "kiln/train/checkpoint_state.h"
#include "kiln/train/optimizer.h"

namespace kiln {

using TensorMap = std::map<std::string, Tensor>;
// One buffer per replica of a value that every replica holds (weights, optimizer state).
using Replicated = std::vector<BufferPtr>;
using BufferMap = std::map<std::string, Replicated>;
// The feeds of one micro-batch: one map per replica, each that replica's slice of the batch.
using ReplicaFeeds = std::vector<TensorMap>;

// What every step program of a run reads and writes, by Hugging Face parameter name: uploaded
// to each replica's device once, then donated to each update and replaced by its results, so it
// stays on the devices for the whole run. Host copies only when asked (checkpoints, export).
class TrainState {
 public:
  // `params` on `replicas` devices of the runtime's backend, the slots `optimizer` keeps for
  // them at zero, no update done. Each host tensor is let go once uploaded: moved in, the host
  // weights are freed one by one instead of sitting next to the whole state (BERT-large: the
  // peak RSS of kiln bench's upload was 0.3 GiB above its steps').
  TrainState(Runtime& runtime, TensorMap params, int replicas = 1,
             const OptimizerConfig& optimizer = {});

  int replicas() const { return replicas_; }
  // Host copies (of the first replica; every replica holds the same values).
  TensorMap params() const;
  OptimizerState optimizer() const;
  // Replace the state from host tensors (a checkpoint, the best model); the gradient sums are
  // cleared. Names and shapes must be those of the state.
  void load_params(const TensorMap& params);
  void load_optimizer(const OptimizerState& optimizer);
  // The state on the devices, one buffer per replica.
  const BufferMap& param_buffers() const { return params_; }
  // The optimizer's slots, keyed "<parameter>.<slot>" (OptimizerState's keys).
  const BufferMap& slot_buffers() const { return slots_; }

 private:
  friend class TrainStep;
  Replicated upload(const Tensor& tensor) const;
  TensorMap to_host(const BufferMap& buffers) const;

  Runtime& runtime_;
  int replicas_;
  std::string optimizer_kind_;
  BufferMap params_, slots_;
  // The scaled gradients summed over the micro-batches of the update in progress; empty
  // between updates (then read as zeros).
  BufferMap gradient_sums_;
  Replicated step_;     // updates done, counted on the device (a skipped update does not count)
  Replicated healthy_;  // with TrainStepConfig::stop_on_nonfinite: no update was non-finite
};

struct TrainStepConfig {
  OptimizerConfig optimizer;
  // Above 0: the gradients are scaled by min(max_grad_norm / (norm + 1e-6), 1) where norm is
  // their global L2 norm, as torch.nn.utils.clip_grad_norm_. 0: no clipping.
  double max_grad_norm = 0.0;
  // Gradient accumulation (gradient_accumulation_steps > 1): adds a `loss_scale` input, the
  // gradient-sum inputs and the accumulate() program. Without it a step is one plain program.
  bool accumulate = false;
  // The compiler's switches (bf16 mixed precision, passes turned off for debugging).
  CompileOptions compile{};
  // --nan_inf_strategy stop: after a non-finite update no later update applies either (a flag
  // kept on the device), so that steps queued before the host reads the flag change nothing.
  bool stop_on_nonfinite = false;
  // Data parallel: the step runs on this many devices, each on its slice of the batch; the
  // gradients, the loss and the counts that normalise it are summed with all_reduce.
  int replicas = 1;
  // Data parallel across processes (mpirun): this many processes run the step, each with
  // `replicas` replicas; all_reduce then sums over every replica of every process.
  int processes = 1;
};

// What an update reports, once read back.
struct StepResult {
  double loss = 0.0;       // the micro-batch's loss, before scaling
  double grad_norm = 0.0;  // the global gradient norm before clipping (what HF logs)
  // Empty when the loss and the gradient norm are finite. Otherwise the update was not applied
  // (parameters and optimizer state are as before) and this describes the first tensor, in
  // graph order, that holds a NaN or an infinity.
  std::string nonfinite;
};

// An update in flight: its scalars stay on the device until result() reads them.
class PendingStep {
 public:
  PendingStep() = default;
  PendingStep(Runtime& runtime, BufferPtr loss, BufferPtr grad_norm, BufferPtr finite)
      : runtime_(&runtime), loss_(std::move(loss)), grad_norm_(std::move(grad_norm)),
        finite_(std::move(finite)) {}
  // Waits for the update; nonfinite holds a placeholder until TrainStep::diagnose() fills it.
  StepResult result() const;

 private:
  Runtime* runtime_ = nullptr;
  BufferPtr loss_, grad_norm_, finite_;
};

// Arguments in `graph`'s input order, each input looked up by name in `maps` in turn; an input
// found in none is an Error naming it.
std::vector<Tensor> arguments_by_name(const Graph& graph,
                                      std::initializer_list<const TensorMap*> maps);
// The same as buffers on `device`: an input named in `held` is that buffer (state already
// there), any other is uploaded from the first of `maps` that names it.
std::vector<BufferPtr> buffer_arguments_by_name(const Graph& graph,
                                                const std::map<std::string, BufferPtr>& held,
                                                std::initializer_list<const TensorMap*> maps,
                                                Runtime& runtime, int device);

class TrainStep {
 public:
  // `params` are inputs of `graph` (role weight) whose names key TrainState::params; `decay[i]`
  // says whether params[i] gets weight decay. Adds the optimizer inputs, the backward graph,
  // clipping and the optimizer to `graph` (which must outlive this object). Programs come from
  // `runtime`'s cache: compiled on first use, found again on every later step.
  // With several replicas or processes, `loss_count` (an f32 scalar of the graph: the number of terms
  // the loss averages) weights each replica's loss by its share of the terms of all replicas,
  // so that the summed loss and gradients are those of the whole batch on one device.
  TrainStep(Graph& graph, Value loss, const std::vector<Value>& params,
            const std::vector<bool>& decay, const TrainStepConfig& config, Runtime& runtime,
            Value loss_count = {});

  // A micro-batch that is not the last of its update: adds the gradients of loss * loss_scale
  // to the state's gradient sums. Needs config.accumulate. Returns the (unscaled) loss, still
  // on the device.
  BufferPtr accumulate(TrainState& state, const ReplicaFeeds& feeds, double loss_scale);

  // The last (or only) micro-batch of an update: the gradients of loss * loss_scale plus the
  // gradient sums are clipped and applied by the optimizer at `learning_rate`; the sums are cleared and
  // the state's update count advances. Without config.accumulate, loss_scale must be 1. When
  // the loss or the gradient norm is not finite, the program keeps the old parameters and
  // slots and the count (a select inside the graph).
  PendingStep update(TrainState& state, const ReplicaFeeds& feeds, double learning_rate,
                     double loss_scale = 1.0);

  // The first tensor, in graph order, of the update on `feeds` at the state's current weights
  // that holds a NaN or an infinity, described for a person (see StepResult::nonfinite).
  // Compiles diagnostic programs; meant for after a non-finite update.
  std::string diagnose(const TrainState& state, const ReplicaFeeds& feeds, double learning_rate,
                       double loss_scale = 1.0);

  // The update program's planned arena (activations, gradients and workspace: see
  // ExecutableStats), per replica; compiles the program if no update did yet.
  int64_t update_arena_bytes();

  // Other outputs of the graph (metrics, predictions) at the state's parameters, on the first
  // replica.
  std::vector<Tensor> evaluate(const TrainState& state, const std::vector<Value>& outputs,
                               const TensorMap& feeds);

 private:
  // Every argument of replica `replica`: state by name, the optimizer scalars, then `feeds`.
  std::vector<BufferPtr> arguments(TrainState& state, size_t replica, const TensorMap& feeds,
                                   double learning_rate, double loss_scale);
  // The same as host tensors, for diagnostic programs.
  std::vector<Tensor> host_arguments(const TrainState& state, const TensorMap& feeds,
                                     double learning_rate, double loss_scale) const;
  BufferLists replica_arguments(TrainState& state, const ReplicaFeeds& feeds,
                                double learning_rate, double loss_scale);
  // The update program (from the runtime's cache after the first call). Its outputs: loss,
  // grad_norm, finite, step, healthy (with stop_on_nonfinite), then from first_param_output()
  // the new parameters, the new slots and the cleared gradient sums.
  Executable& update_program();
  size_t first_param_output() const { return config_.stop_on_nonfinite ? 5 : 4; }
  // The index in graph_.inputs() of the input named `name`.
  int32_t input_index(const std::string& name) const;
  // train_step_nonfinite.cpp: the first input or computed tensor of the update (in graph
  // order) holding a NaN or an infinity, described for a person, or empty when there is none;
  // compiles a program each call.
  std::string first_nonfinite(const std::vector<Tensor>& arguments);

  Graph& graph_;
  Runtime& runtime_;
  TrainStepConfig config_;
  DType dtype_ = DType::f32;
  std::vector<std::string> names_;
  std::vector<Shape> shapes_;
  Value loss_, grad_norm_;
  Value finite_;  // bool scalar: the update applies (finite, and healthy before when stopping)
  Value new_step_, new_healthy_;
  std::vector<Value> new_params_, new_sums_;
  std::vector<std::string> slot_names_;  // every parameter's slots, "<parameter>.<slot>"
  std::vector<Value> new_slots_;         // in slot_names_' order
  std::vector<Value> zero_sums_;  // the next update's gradient sums, made on the device
};

}  // namespace kiln
