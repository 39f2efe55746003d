// Per-shape graphs of the task's model, their training steps and forward programs.
#include "kiln/train/trainer_programs.h"

#include <sstream>

#include "kiln/ir/error.h"

namespace kiln {

struct ModelPrograms::Entry {
  Graph graph;
  TaskModel model;
  std::unique_ptr<TrainStep> step;      // training entries
  std::unique_ptr<Executable> forward;  // evaluation entries, compiled on first use
};

ModelPrograms::ModelPrograms(TaskKind task, BertConfig config, TrainStepConfig step_config,
                             Backend& backend, std::function<void(const std::string&)> note)
    : task_(task),
      config_(std::move(config)),
      step_config_(step_config),
      backend_(backend),
      note_(std::move(note)) {}

ModelPrograms::~ModelPrograms() = default;

ModelPrograms::Entry& ModelPrograms::entry(const Key& key, DType index_dtype,
                                           bool integer_labels) {
  if (auto found = entries_.find(key); found != entries_.end()) return *found->second;
  auto [training, batch, length, with_labels] = key;
  std::ostringstream line;
  line << "compiling the " << (training ? "training step" : "forward pass") << " for batches ["
       << batch << ", " << length << "]";
  // A later compile says what changed: the bucket length of another shape of the same kind.
  for (const auto& [other, unused] : entries_) {
    if (std::get<0>(other) == training && std::get<3>(other) == with_labels) {
      line << " (input_ids changed from [" << std::get<1>(other) << ", " << std::get<2>(other)
           << "])";
      break;
    }
  }
  note_(line.str());

  auto made = std::make_unique<Entry>();
  BertBuildOptions options;
  options.batch_size = batch;
  options.seq_len = length;
  options.index_dtype = index_dtype;
  options.training = training;
  options.with_labels = with_labels;
  options.integer_labels = integer_labels;
  made->model = build_task_model(task_, made->graph, config_, options);
  if (training) {
    made->step = std::make_unique<TrainStep>(made->graph, made->model.loss, made->model.params,
                                             made->model.decay, step_config_, backend_);
  }
  return *entries_.emplace(key, std::move(made)).first->second;
}

TrainStep& ModelPrograms::train_step(const Shape& batch_shape, DType index_dtype,
                                     bool integer_labels) {
  check(batch_shape.size() == 2, "trainer", "batches must be [batch, length]");
  return *entry({true, batch_shape[0], batch_shape[1], true}, index_dtype, integer_labels).step;
}

std::vector<Tensor> ModelPrograms::forward(const TensorMap& params, const TensorMap& feeds,
                                           bool with_labels, bool integer_labels) {
  const Tensor& ids = feeds.at("input_ids");
  Entry& found =
      entry({false, ids.shape()[0], ids.shape()[1], with_labels}, ids.dtype(), integer_labels);
  std::vector<Value> outputs = found.model.outputs;
  if (with_labels) outputs.push_back(found.model.loss);
  if (!found.forward) {
    found.forward = backend_.compile(found.graph, outputs);
    ++eval_compiles_;
  }
  return found.forward->run(arguments_by_name(found.graph, {&params, &feeds}));
}

int64_t ModelPrograms::compiles() const {
  int64_t total = eval_compiles_;
  for (const auto& [key, made] : entries_) {
    if (made->step) total += made->step->compiles();
  }
  return total;
}

}  // namespace kiln
