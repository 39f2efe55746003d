// Compiled update and accumulation programs over one graph, reading and writing a TrainState
// that stays on the devices.
#include "kiln/train/train_step.h"

#include <cmath>

#include "kiln/autodiff/grad.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/train/optimizer.h"

namespace kiln {
namespace {

// Graph-input names of the optimizer's scalars and per-parameter state.
constexpr const char* kLearningRate = "optimizer.learning_rate";
constexpr const char* kStep = "optimizer.step";
constexpr const char* kHealthy = "optimizer.healthy";
constexpr const char* kLossScale = "optimizer.loss_scale";
const std::string kGradSum = ".grad_sum";

const Replicated& state_buffers(const BufferMap& map, const std::string& name, const char* what) {
  auto found = map.find(name);
  check(found != map.end(), "train_step", "the training state has no ", what, " for '", name, "'");
  return found->second;
}

void check_same_names(const TensorMap& loaded, const BufferMap& state, const char* what) {
  check(loaded.size() == state.size(), "train_step", "loading ", loaded.size(), " ", what,
        " into a state of ", state.size());
  for (const auto& [name, buffers] : state) {
    auto found = loaded.find(name);
    check(found != loaded.end(), "train_step", "no ", what, " for '", name, "' to load");
    check(found->second.shape() == buffers[0]->shape(), "train_step", what, " '", name,
          "' has shape ", shape_str(found->second.shape()), ", the state ",
          shape_str(buffers[0]->shape()));
  }
}

}  // namespace

TrainState::TrainState(Runtime& runtime, TensorMap params, int replicas,
                       const OptimizerConfig& optimizer)
    : runtime_(runtime), replicas_(replicas), optimizer_kind_(optimizer_kind(optimizer.name)) {
  check(replicas >= 1 && replicas <= runtime.backend().devices(), "train_step", replicas,
        " replicas, but the ", runtime.backend().name(), " backend has ",
        runtime.backend().devices(), " devices");
  std::unique_ptr<Optimizer> rule = make_optimizer(optimizer);
  DType dtype = params.empty() ? DType::f32 : params.begin()->second.dtype();
  while (!params.empty()) {
    auto entry = params.extract(params.begin());  // freed at the end of the iteration
    const Tensor& value = entry.mapped();
    params_.emplace(entry.key(), upload(value));
    for (const OptimizerSlot& slot : rule->slots(value.shape())) {
      slots_.emplace(entry.key() + "." + slot.name, upload(Tensor(value.dtype(), slot.shape)));
    }
  }
  step_ = upload(Tensor::scalar(dtype, 0.0));
  healthy_ = upload(Tensor::scalar(DType::boolean, 1.0));
}

Replicated TrainState::upload(const Tensor& tensor) const {
  Replicated out;
  for (int r = 0; r < replicas_; ++r) out.push_back(runtime_.upload(tensor, r));
  return out;
}

TensorMap TrainState::to_host(const BufferMap& buffers) const {
  TensorMap out;
  for (const auto& [name, replicas] : buffers) out.emplace(name, runtime_.to_host(*replicas[0]));
  return out;
}

TensorMap TrainState::params() const { return to_host(params_); }

OptimizerState TrainState::optimizer() const {
  return {optimizer_kind_, static_cast<int64_t>(runtime_.to_host(*step_[0]).get(0)),
          to_host(slots_)};
}

void TrainState::load_params(const TensorMap& params) {
  check_same_names(params, params_, "parameter");
  for (auto& [name, buffers] : params_) {
    const Tensor& value = params.at(name);
    buffers = upload(value.dtype() == buffers[0]->dtype() ? value : value.cast(buffers[0]->dtype()));
  }
  gradient_sums_.clear();
}

void TrainState::load_optimizer(const OptimizerState& optimizer) {
  check(optimizer.optimizer == optimizer_kind_, "train_step", "loading ", optimizer.optimizer,
        " state into a state of ", optimizer_kind_);
  check_same_names(optimizer.slots, slots_, "optimizer slot");
  for (auto& [name, buffers] : slots_) {
    buffers = upload(optimizer.slots.at(name).cast(buffers[0]->dtype()));
  }
  step_ = upload(Tensor::scalar(step_[0]->dtype(), static_cast<double>(optimizer.step)));
  healthy_ = upload(Tensor::scalar(DType::boolean, 1.0));
  gradient_sums_.clear();
}

StepResult PendingStep::result() const {
  check(runtime_ != nullptr, "train_step", "no update to read back");
  StepResult result{runtime_->to_host(*loss_).get(0), runtime_->to_host(*grad_norm_).get(0), ""};
  if (runtime_->to_host(*finite_).get(0) == 0.0) result.nonfinite = "not diagnosed";
  return result;
}

namespace {

// The first of `maps`' tensors named `name`; an Error when none is.
const Tensor& named_tensor(std::initializer_list<const TensorMap*> maps, const std::string& name) {
  for (const TensorMap* map : maps) {
    if (auto found = map->find(name); found != map->end()) return found->second;
  }
  fail("train_step", "no value for graph input '", name, "'");
}

}  // namespace

std::vector<Tensor> arguments_by_name(const Graph& graph,
                                      std::initializer_list<const TensorMap*> maps) {
  std::vector<Tensor> out;
  out.reserve(graph.inputs().size());
  for (int32_t id : graph.inputs()) out.push_back(named_tensor(maps, graph.input_name(id)));
  return out;
}

std::vector<BufferPtr> buffer_arguments_by_name(const Graph& graph,
                                                const std::map<std::string, BufferPtr>& held,
                                                std::initializer_list<const TensorMap*> maps,
                                                Runtime& runtime, int device) {
  std::vector<BufferPtr> out;
  out.reserve(graph.inputs().size());
  for (int32_t id : graph.inputs()) {
    const std::string& name = graph.input_name(id);
    auto found = held.find(name);
    out.push_back(found != held.end() ? found->second
                                      : runtime.upload(named_tensor(maps, name), device));
  }
  return out;
}

TrainStep::TrainStep(Graph& graph, Value loss, const std::vector<Value>& params,
                     const std::vector<bool>& decay, const TrainStepConfig& config,
                     Runtime& runtime, Value loss_count)
    : graph_(graph), runtime_(runtime), config_(config), loss_(loss) {
  check(!params.empty() && params.size() == decay.size(), "train_step", params.size(),
        " parameters, ", decay.size(), " decay flags");
  check(loss.rank() == 0 && is_floating(loss.dtype()), "train_step",
        "the loss must be a floating scalar");
  dtype_ = params[0].dtype();
  for (const Value& param : params) {
    names_.push_back(graph.input_name(param.id()));
    shapes_.push_back(param.shape());
  }
  Value lr = graph.input(kLearningRate, dtype_, {}, InputRole::state);
  Value step = graph.input(kStep, dtype_, {}, InputRole::state);
  const bool replicated = config.replicas * config.processes > 1;
  if (replicated) {
    // DDP's arithmetic: each replica's mean, weighted by its share of all replicas' terms, so
    // that the sums over replicas are the whole batch's mean and its gradient.
    check(loss_count.valid(), "train_step", "a step of ", config.replicas, " replicas in ",
          config.processes, " processes needs the loss's count of terms");
    Value total = all_reduce(loss_count);
    Value weight = cast(loss_count / max(total, scalar_like(total, 1.0)), loss.dtype());
    loss = loss * weight;
    loss_ = all_reduce(loss);
  }
  // HF divides each micro-batch's loss by the number of micro-batches before backward.
  Value scaled =
      config.accumulate ? loss * graph.input(kLossScale, loss.dtype(), {}, InputRole::state) : loss;
  std::vector<Value> grads;
  {
    LayerMarkScope backward(graph, layer_mark::backward);  // for --gradient_checkpointing
    grads = grad(scaled, params);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (config.accumulate) {
      Value sum = graph.input(names_[i] + kGradSum, dtype_, shapes_[i], InputRole::state);
      zero_sums_.push_back(zeros_like(sum));
      grads[i] = sum + grads[i];
      new_sums_.push_back(grads[i]);  // summed on each replica alone until the update (no_sync)
    }
  }
  // Every replica applies the same update: the sum of all replicas' gradients. Collectives run
  // in node order, so they are made in the order the backward pass tends to produce the
  // gradients (the last parameters' first) for each to start while the rest is computed.
  for (size_t i = params.size(); replicated && i-- > 0;) grads[i] = all_reduce(grads[i]);

  Value squares;
  for (size_t i = 0; i < grads.size(); ++i) {
    Value sum = reduce_sum(grads[i] * grads[i]);
    squares = i == 0 ? sum : squares + sum;
  }
  grad_norm_ = sqrt(squares);
  // A non-finite update is not applied: the outputs select the old state (see update()).
  auto is_finite = [](Value x) { return lt(abs(x), scalar_like(x, HUGE_VAL)); };
  finite_ = logical_and(is_finite(loss_), is_finite(grad_norm_));  // the same on every replica
  if (config.stop_on_nonfinite) {
    finite_ = logical_and(finite_, graph.input(kHealthy, DType::boolean, {}, InputRole::state));
    new_healthy_ = finite_;
  }
  if (config.max_grad_norm > 0) {
    Value coef = min(config.max_grad_norm / (grad_norm_ + 1e-6), scalar_like(grad_norm_, 1.0));
    for (Value& g : grads) g = g * coef;
  }

  Value next_step = step + 1.0;  // optimizers count updates from 1
  new_step_ = select(finite_, next_step, step);
  std::unique_ptr<Optimizer> optimizer = make_optimizer(config.optimizer);
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<Value> slots;
    for (const OptimizerSlot& slot : optimizer->slots(shapes_[i])) {
      slot_names_.push_back(names_[i] + "." + slot.name);
      slots.push_back(graph.input(slot_names_.back(), dtype_, slot.shape, InputRole::state));
    }
    OptimizerUpdate updated =
        optimizer->update(params[i], grads[i], slots, lr, next_step, decay[i]);
    new_params_.push_back(select(finite_, updated.param, params[i]));
    for (size_t s = 0; s < slots.size(); ++s) {
      new_slots_.push_back(select(finite_, updated.slots[s], slots[s]));
    }
  }
}

std::vector<BufferPtr> TrainStep::arguments(TrainState& state, size_t replica,
                                            const TensorMap& feeds, double learning_rate,
                                            double loss_scale) {
  std::map<std::string, BufferPtr> named;
  for (size_t i = 0; i < names_.size(); ++i) {
    const std::string& name = names_[i];
    named.emplace(name, state_buffers(state.params_, name, "parameter")[replica]);
    if (config_.accumulate) {
      auto sum = state.gradient_sums_.find(name);
      if (sum == state.gradient_sums_.end()) {
        sum = state.gradient_sums_.emplace(name, state.upload(Tensor(dtype_, shapes_[i]))).first;
      }
      named.emplace(name + kGradSum, sum->second[replica]);
    }
  }
  for (const std::string& slot : slot_names_) {
    named.emplace(slot, state_buffers(state.slots_, slot, "optimizer slot")[replica]);
  }
  named.emplace(kStep, state.step_[replica]);
  named.emplace(kHealthy, state.healthy_[replica]);
  const TensorMap scalars = {{kLearningRate, Tensor::scalar(dtype_, learning_rate)},
                             {kLossScale, Tensor::scalar(loss_.dtype(), loss_scale)}};
  return buffer_arguments_by_name(graph_, named, {&scalars, &feeds}, runtime_,
                                  static_cast<int>(replica));
}

BufferLists TrainStep::replica_arguments(TrainState& state, const ReplicaFeeds& feeds,
                                         double learning_rate, double loss_scale) {
  check(static_cast<int>(feeds.size()) == state.replicas() && state.replicas() == config_.replicas,
        "train_step", "a step of ", config_.replicas, " replicas on a state of ",
        state.replicas(), " with feeds for ", feeds.size());
  BufferLists lists;
  for (size_t r = 0; r < feeds.size(); ++r) {
    lists.push_back(arguments(state, r, feeds[r], learning_rate, loss_scale));
  }
  return lists;
}

std::vector<Tensor> TrainStep::host_arguments(const TrainState& state, const TensorMap& feeds,
                                              double learning_rate, double loss_scale) const {
  TensorMap named = {{kLearningRate, Tensor::scalar(dtype_, learning_rate)},
                     {kLossScale, Tensor::scalar(loss_.dtype(), loss_scale)},
                     {kStep, runtime_.to_host(*state.step_[0])},
                     {kHealthy, runtime_.to_host(*state.healthy_[0])}};
  for (const BufferMap* part : {&state.params_, &state.slots_}) {
    for (const auto& [name, buffers] : *part) named.emplace(name, runtime_.to_host(*buffers[0]));
  }
  for (size_t i = 0; i < names_.size() && config_.accumulate; ++i) {
    auto sum = state.gradient_sums_.find(names_[i]);
    named.emplace(names_[i] + kGradSum, sum != state.gradient_sums_.end()
                                            ? runtime_.to_host(*sum->second[0])
                                            : Tensor(dtype_, shapes_[i]));
  }
  return arguments_by_name(graph_, {&named, &feeds});
}

int32_t TrainStep::input_index(const std::string& name) const {
  const std::vector<int32_t>& inputs = graph_.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (graph_.input_name(inputs[i]) == name) return static_cast<int32_t>(i);
  }
  fail("train_step", "the step graph has no input '", name, "'");
}

BufferPtr TrainStep::accumulate(TrainState& state, const ReplicaFeeds& feeds, double loss_scale) {
  check(config_.accumulate, "train_step", "accumulate() needs a step built with accumulate");
  std::vector<Value> outputs = {loss_};
  outputs.insert(outputs.end(), new_sums_.begin(), new_sums_.end());
  std::vector<Donation> donations;
  for (size_t i = 0; i < names_.size(); ++i) {
    donations.push_back({input_index(names_[i] + kGradSum), static_cast<int32_t>(1 + i)});
  }
  BufferLists arguments = replica_arguments(state, feeds, 0.0, loss_scale);
  BufferLists results =
      runtime_
          .compile(graph_, outputs, {config_.compile, donations, config_.replicas},
                   "accumulation step")
          .run(arguments);
  for (size_t i = 0; i < names_.size(); ++i) {
    Replicated& sums = state.gradient_sums_[names_[i]];
    sums.resize(results.size());
    for (size_t r = 0; r < results.size(); ++r) sums[r] = results[r][1 + i];
  }
  return results[0][0];
}

Executable& TrainStep::update_program() {
  std::vector<Value> outputs = {loss_, grad_norm_, finite_, new_step_};
  std::vector<Donation> donations = {{input_index(kStep), 3}};
  if (config_.stop_on_nonfinite) {
    outputs.push_back(new_healthy_);
    donations.push_back({input_index(kHealthy), 4});
  }
  const size_t first = first_param_output();
  for (const auto* part : {&new_params_, &new_slots_, &zero_sums_}) {
    outputs.insert(outputs.end(), part->begin(), part->end());
  }
  const size_t count = names_.size(), slot_count = slot_names_.size();
  const size_t first_slot = first + count;
  for (size_t i = 0; i < count; ++i) {
    donations.push_back({input_index(names_[i]), static_cast<int32_t>(first + i)});
  }
  for (size_t s = 0; s < slot_count; ++s) {
    donations.push_back({input_index(slot_names_[s]), static_cast<int32_t>(first_slot + s)});
  }
  return runtime_.compile(graph_, outputs, {config_.compile, donations, config_.replicas},
                          "training step");
}

int64_t TrainStep::update_arena_bytes() { return update_program().stats().arena_bytes; }

PendingStep TrainStep::update(TrainState& state, const ReplicaFeeds& feeds, double learning_rate,
                              double loss_scale) {
  check(config_.accumulate || loss_scale == 1.0, "train_step",
        "a loss scale needs a step built with accumulate");
  const size_t first = first_param_output();
  const size_t count = names_.size(), slot_count = slot_names_.size();
  const size_t first_slot = first + count, first_sum = first_slot + slot_count;
  BufferLists arguments = replica_arguments(state, feeds, learning_rate, loss_scale);
  BufferLists results = update_program().run(arguments);
  arguments.clear();  // the donated buffers are the results' now
  for (size_t r = 0; r < results.size(); ++r) {
    const std::vector<BufferPtr>& out = results[r];
    state.step_[r] = out[3];
    if (config_.stop_on_nonfinite) state.healthy_[r] = out[4];
    for (size_t s = 0; s < slot_count; ++s) state.slots_[slot_names_[s]][r] = out[first_slot + s];
    for (size_t i = 0; i < count; ++i) {
      state.params_[names_[i]][r] = out[first + i];
      if (config_.accumulate) {
        Replicated& sums = state.gradient_sums_[names_[i]];
        sums.resize(results.size());
        sums[r] = out[first_sum + i];
      }
    }
  }
  return PendingStep(runtime_, results[0][0], results[0][1], results[0][2]);
}

std::vector<Tensor> TrainStep::evaluate(const TrainState& state, const std::vector<Value>& outputs,
                                        const TensorMap& feeds) {
  return runtime_.compile(graph_, outputs, {config_.compile, {}}, "evaluation")
      .run(host_arguments(state, feeds, 0.0, 1.0));
}

}  // namespace kiln
