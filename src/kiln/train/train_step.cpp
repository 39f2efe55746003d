// A compiled training step with carried parameters and optimizer state.
#include "kiln/train/train_step.h"

#include <algorithm>

#include "kiln/autodiff/grad.h"
#include "kiln/ir/error.h"

namespace kiln {

TrainStep::TrainStep(Graph& graph, Value loss, const std::vector<Value>& params,
                     std::vector<Tensor> initial_values, const std::vector<bool>& decay,
                     const AdamWConfig& config, Backend& backend)
    : values_(std::move(initial_values)), graph_(graph), backend_(backend) {
  check(!params.empty() && params.size() == values_.size() && params.size() == decay.size(),
        "train_step", params.size(), " parameters, ", values_.size(), " initial values, ",
        decay.size(), " decay flags");
  dtype_ = params[0].dtype();
  std::vector<Value> grads = grad(loss, params);
  Value lr = graph.input("learning_rate", dtype_, {}, InputRole::state);
  Value step = graph.input("step", dtype_, {}, InputRole::state);
  lr_id_ = lr.id();
  step_id_ = step.id();

  std::vector<Value> outputs = {loss};
  std::vector<Value> new_m, new_v;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = graph.input_name(params[i].id());
    Value m = graph.input(name + ".exp_avg", dtype_, params[i].shape(), InputRole::state);
    Value v = graph.input(name + ".exp_avg_sq", dtype_, params[i].shape(), InputRole::state);
    AdamWSlot updated = adamw_update({params[i], m, v}, grads[i], lr, step, config, decay[i]);
    param_ids_.push_back(params[i].id());
    m_ids_.push_back(m.id());
    v_ids_.push_back(v.id());
    m_.emplace_back(dtype_, params[i].shape());
    v_.emplace_back(dtype_, params[i].shape());
    outputs.push_back(updated.param);
    new_m.push_back(updated.m);
    new_v.push_back(updated.v);
  }
  outputs.insert(outputs.end(), new_m.begin(), new_m.end());
  outputs.insert(outputs.end(), new_v.begin(), new_v.end());
  program_ = backend.compile(graph, outputs);
}

std::vector<Tensor> TrainStep::assemble_arguments(const std::vector<Tensor>& feeds,
                                                  double learning_rate) {
  Tensor lr = Tensor::scalar(dtype_, learning_rate);
  Tensor step = Tensor::scalar(dtype_, static_cast<double>(steps_done_ + 1));
  auto carried = [&](int32_t id) -> const Tensor* {
    if (id == lr_id_) return &lr;
    if (id == step_id_) return &step;
    for (size_t i = 0; i < param_ids_.size(); ++i) {
      if (id == param_ids_[i]) return &values_[i];
      if (id == m_ids_[i]) return &m_[i];
      if (id == v_ids_[i]) return &v_[i];
    }
    return nullptr;
  };
  std::vector<Tensor> arguments;
  size_t next_feed = 0;
  for (int32_t id : graph_.inputs()) {
    if (const Tensor* value = carried(id)) {
      arguments.push_back(*value);
    } else {
      check(next_feed < feeds.size(), "train_step", "missing a feed for input '",
            graph_.input_name(id), "'");
      arguments.push_back(feeds[next_feed++]);
    }
  }
  check(next_feed == feeds.size(), "train_step", feeds.size(), " feeds given, ", next_feed,
        " used");
  return arguments;
}

std::vector<Tensor> TrainStep::evaluate(const std::vector<Value>& outputs,
                                        const std::vector<Tensor>& feeds) {
  return backend_.compile(graph_, outputs)->run(assemble_arguments(feeds, 0.0));
}

double TrainStep::run(const std::vector<Tensor>& feeds, double learning_rate) {
  std::vector<Tensor> results = program_->run(assemble_arguments(feeds, learning_rate));
  size_t count = values_.size();
  for (size_t i = 0; i < count; ++i) {
    values_[i] = results[1 + i];
    m_[i] = results[1 + count + i];
    v_[i] = results[1 + 2 * count + i];
  }
  ++steps_done_;
  return results[0].get(0);
}

}  // namespace kiln
