// Per-shape graphs of the task's model, their training steps and forward programs.
#include "kiln/train/trainer_programs.h"

#include "kiln/io/mlm_collate.h"
#include "kiln/ir/error.h"

namespace kiln {

struct ModelPrograms::Entry {
  Graph graph;
  TaskModel model;
  std::unique_ptr<TrainStep> step;  // training entries
};

ModelPrograms::ModelPrograms(ModelHead head, const PretrainedConfig& config,
                             TrainStepConfig step_config, Runtime& runtime,
                             double mlm_probability, double label_smoothing)
    : head_(head),
      config_(config.clone()),
      family_(model_family(config)),
      step_config_(step_config),
      runtime_(runtime),
      mlm_probability_(mlm_probability),
      label_smoothing_(label_smoothing) {}

ModelPrograms::~ModelPrograms() = default;

ModelPrograms::Entry& ModelPrograms::entry(const Key& key, DType index_dtype,
                                           bool integer_labels) {
  if (auto found = entries_.find(key); found != entries_.end()) return *found->second;
  auto [training, batch, length, with_labels] = key;
  auto made = std::make_unique<Entry>();
  ModelBuildOptions options;
  options.batch_size = batch;
  options.seq_len = length;
  options.index_dtype = index_dtype;
  options.training = training;
  options.with_labels = with_labels;
  options.integer_labels = integer_labels;
  options.label_smoothing = label_smoothing_;
  if (head_ == ModelHead::masked_lm && with_labels) {
    options.mlm_predictions = mlm_prediction_capacity(batch * length, mlm_probability_);
  }
  made->model = family_.build(head_, made->graph, *config_, options);
  if (training) {
    made->step =
        std::make_unique<TrainStep>(made->graph, made->model.loss, made->model.params,
                                    made->model.decay, step_config_, runtime_,
                                    made->model.loss_count);
  }
  return *entries_.emplace(key, std::move(made)).first->second;
}

TrainStep& ModelPrograms::train_step(const Shape& batch_shape, DType index_dtype,
                                     bool integer_labels) {
  check(batch_shape.size() == 2, "trainer", "batches must be [batch, length]");
  return *entry({true, batch_shape[0], batch_shape[1], true}, index_dtype, integer_labels).step;
}

std::vector<Tensor> ModelPrograms::forward(const TrainState& state, const TensorMap& feeds,
                                           bool with_labels, bool integer_labels) {
  const Tensor& ids = feeds.at("input_ids");
  Entry& found =
      entry({false, ids.shape()[0], ids.shape()[1], with_labels}, ids.dtype(), integer_labels);
  std::vector<Value> outputs = found.model.outputs;
  if (with_labels) outputs.push_back(found.model.loss);
  std::map<std::string, BufferPtr> weights;  // the first replica's
  for (const auto& [name, replicas] : state.param_buffers()) weights.emplace(name, replicas[0]);
  std::vector<BufferPtr> arguments =
      buffer_arguments_by_name(found.graph, weights, {&feeds}, runtime_, 0);
  // Evaluation runs with the training step's compiler options: bf16 too, as HF's autocast.
  BufferLists results =
      runtime_.compile(found.graph, outputs, CompileSpec{step_config_.compile, {}}, "forward pass")
          .run(BufferLists{std::move(arguments)});
  std::vector<Tensor> values;
  for (const BufferPtr& result : results[0]) values.push_back(runtime_.to_host(*result));
  return values;
}

}  // namespace kiln
