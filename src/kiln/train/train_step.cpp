// Compiled update and accumulation programs over one graph, reading and writing a TrainState.
#include "kiln/train/train_step.h"

#include <cmath>

#include "kiln/autodiff/grad.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

// Graph-input names of the optimizer's scalars and per-parameter state.
constexpr const char* kLearningRate = "optimizer.learning_rate";
constexpr const char* kStep = "optimizer.step";
constexpr const char* kLossScale = "optimizer.loss_scale";
const std::string kExpAvg = ".exp_avg", kExpAvgSq = ".exp_avg_sq", kGradSum = ".grad_sum";

const Tensor& state_tensor(const TensorMap& map, const std::string& name, const char* what) {
  auto found = map.find(name);
  check(found != map.end(), "train_step", "the training state has no ", what, " for '", name, "'");
  return found->second;
}

// Donated tensors are overwritten in place, so a state tensor that shares its bytes with another
// (a caller's copy of the initial weights, say) is copied first: nobody else sees the update.
void own_bytes(TensorMap& map) {
  for (auto& [name, value] : map) {
    if (!value.owns_bytes_alone()) value = value.clone();
  }
}

}  // namespace

TrainState TrainState::start(TensorMap params) {
  TrainState state;
  for (const auto& [name, value] : params) {
    state.optimizer.exp_avg.emplace(name, Tensor(value.dtype(), value.shape()));
    state.optimizer.exp_avg_sq.emplace(name, Tensor(value.dtype(), value.shape()));
  }
  state.params = std::move(params);
  return state;
}

std::vector<Tensor> arguments_by_name(const Graph& graph,
                                      std::initializer_list<const TensorMap*> maps) {
  std::vector<Tensor> out;
  out.reserve(graph.inputs().size());
  for (int32_t id : graph.inputs()) {
    const std::string& name = graph.input_name(id);
    const Tensor* value = nullptr;
    for (const TensorMap* map : maps) {
      if (auto found = map->find(name); found != map->end()) {
        value = &found->second;
        break;
      }
    }
    check(value != nullptr, "train_step", "no value for graph input '", name, "'");
    out.push_back(*value);
  }
  return out;
}

TrainStep::TrainStep(Graph& graph, Value loss, const std::vector<Value>& params,
                     const std::vector<bool>& decay, const TrainStepConfig& config,
                     Runtime& runtime)
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
  // HF divides each micro-batch's loss by the number of micro-batches before backward.
  Value scaled =
      config.accumulate ? loss * graph.input(kLossScale, loss.dtype(), {}, InputRole::state) : loss;
  std::vector<Value> grads = grad(scaled, params);
  if (config.accumulate) {
    for (size_t i = 0; i < params.size(); ++i) {
      grads[i] = graph.input(names_[i] + kGradSum, dtype_, shapes_[i], InputRole::state) + grads[i];
      new_sums_.push_back(grads[i]);
    }
  }

  Value squares;
  for (size_t i = 0; i < grads.size(); ++i) {
    Value sum = reduce_sum(grads[i] * grads[i]);
    squares = i == 0 ? sum : squares + sum;
  }
  grad_norm_ = sqrt(squares);
  // A non-finite update is not applied: the outputs select the old state (see update()).
  auto is_finite = [](Value x) { return lt(abs(x), scalar_like(x, HUGE_VAL)); };
  finite_ = logical_and(is_finite(loss), is_finite(grad_norm_));
  if (config.max_grad_norm > 0) {
    Value coef = min(config.max_grad_norm / (grad_norm_ + 1e-6), scalar_like(grad_norm_, 1.0));
    for (Value& g : grads) g = g * coef;
  }

  for (size_t i = 0; i < params.size(); ++i) {
    Value m = graph.input(names_[i] + kExpAvg, dtype_, shapes_[i], InputRole::state);
    Value v = graph.input(names_[i] + kExpAvgSq, dtype_, shapes_[i], InputRole::state);
    AdamWSlot updated = adamw_update({params[i], m, v}, grads[i], lr, step, config.adamw, decay[i]);
    new_params_.push_back(select(finite_, updated.param, params[i]));
    new_m_.push_back(select(finite_, updated.m, m));
    new_v_.push_back(select(finite_, updated.v, v));
  }
}

std::vector<Tensor> TrainStep::arguments(const TrainState& state, const TensorMap& feeds,
                                         double learning_rate, double loss_scale) const {
  TensorMap named = {{kLearningRate, Tensor::scalar(dtype_, learning_rate)},
                     {kStep, Tensor::scalar(dtype_, static_cast<double>(state.optimizer.step + 1))},
                     {kLossScale, Tensor::scalar(loss_.dtype(), loss_scale)}};
  for (size_t i = 0; i < names_.size(); ++i) {
    const std::string& name = names_[i];
    named.emplace(name, state_tensor(state.params, name, "parameter"));
    named.emplace(name + kExpAvg, state_tensor(state.optimizer.exp_avg, name, "exp_avg"));
    named.emplace(name + kExpAvgSq, state_tensor(state.optimizer.exp_avg_sq, name, "exp_avg_sq"));
    if (config_.accumulate) {
      auto sum = state.gradient_sums.find(name);
      named.emplace(name + kGradSum,
                    sum != state.gradient_sums.end() ? sum->second : Tensor(dtype_, shapes_[i]));
    }
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

double TrainStep::accumulate(TrainState& state, const TensorMap& feeds, double loss_scale) {
  check(config_.accumulate, "train_step", "accumulate() needs a step built with accumulate");
  std::vector<Value> outputs = {loss_};
  outputs.insert(outputs.end(), new_sums_.begin(), new_sums_.end());
  std::vector<Donation> donations;
  for (size_t i = 0; i < names_.size(); ++i) {
    donations.push_back({input_index(names_[i] + kGradSum), static_cast<int32_t>(1 + i)});
  }
  own_bytes(state.gradient_sums);
  std::vector<Tensor> results =
      runtime_.compile(graph_, outputs, {config_.compile, donations}, "accumulation step")
          .run(arguments(state, feeds, 0.0, loss_scale));
  for (size_t i = 0; i < names_.size(); ++i) state.gradient_sums[names_[i]] = results[1 + i];
  return results[0].get(0);
}

StepResult TrainStep::update(TrainState& state, const TensorMap& feeds, double learning_rate,
                             double loss_scale) {
  check(config_.accumulate || loss_scale == 1.0, "train_step",
        "a loss scale needs a step built with accumulate");
  std::vector<Value> outputs = {loss_, grad_norm_, finite_};
  for (const auto* part : {&new_params_, &new_m_, &new_v_}) {
    outputs.insert(outputs.end(), part->begin(), part->end());
  }
  size_t count = names_.size();
  std::vector<Donation> donations;
  for (size_t i = 0; i < count; ++i) {
    auto output = static_cast<int32_t>(3 + i);
    auto n = static_cast<int32_t>(count);
    donations.push_back({input_index(names_[i]), output});
    donations.push_back({input_index(names_[i] + kExpAvg), output + n});
    donations.push_back({input_index(names_[i] + kExpAvgSq), output + 2 * n});
  }
  own_bytes(state.params);
  own_bytes(state.optimizer.exp_avg);
  own_bytes(state.optimizer.exp_avg_sq);
  // The guard in the graph writes the old values back when a value is not finite, so the donated
  // arguments still hold the state before the update when first_nonfinite() reads them.
  std::vector<Tensor> args = arguments(state, feeds, learning_rate, loss_scale);
  std::vector<Tensor> results =
      runtime_.compile(graph_, outputs, {config_.compile, donations}, "training step").run(args);
  StepResult result{results[0].get(0), results[1].get(0), ""};
  if (results[2].get(0) == 0.0) result.nonfinite = first_nonfinite(args);
  for (size_t i = 0; i < count; ++i) {
    state.params[names_[i]] = results[3 + i];
    state.optimizer.exp_avg[names_[i]] = results[3 + count + i];
    state.optimizer.exp_avg_sq[names_[i]] = results[3 + 2 * count + i];
  }
  if (result.nonfinite.empty()) ++state.optimizer.step;
  state.gradient_sums.clear();
  return result;
}

std::vector<Tensor> TrainStep::evaluate(const TrainState& state, const std::vector<Value>& outputs,
                                        const TensorMap& feeds) {
  return runtime_.compile(graph_, outputs, {config_.compile, {}}, "evaluation")
      .run(arguments(state, feeds, 0.0, 1.0));
}

}  // namespace kiln
