// The programs of a run: a graph of the task's model per batch shape (one per bucket length),
// built the first time a shape is seen, with its training step or its forward pass compiled
// through the runtime (which counts and explains every compile).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "kiln/models/model_family.h"
#include "kiln/runtime/runtime.h"
#include "kiln/train/task.h"
#include "kiln/train/train_step.h"

namespace kiln {

class ModelPrograms {
 public:
  // The graphs of `head` on the model of `config`'s family (model_family.h); mlm_probability
  // sizes the masked-LM head's predictions per batch shape (MlmData's feeds).
  ModelPrograms(ModelHead head, const PretrainedConfig& config, TrainStepConfig step_config,
                Runtime& runtime, double mlm_probability, double label_smoothing = 0.0);
  ~ModelPrograms();

  // The training step for batches of `batch_shape` ([batch, length]); labels are class ids or,
  // with integer_labels false, float regression targets.
  TrainStep& train_step(const Shape& batch_shape, DType index_dtype, bool integer_labels);

  // The forward pass without dropout at the state's weights (on its first device): the task
  // model's outputs, then the loss when with_labels, copied to the host.
  std::vector<Tensor> forward(const TrainState& state, const TensorMap& feeds, bool with_labels,
                              bool integer_labels);

 private:
  struct Entry;
  using Key = std::tuple<bool, int64_t, int64_t, bool>;  // training, batch, length, labels
  Entry& entry(const Key& key, DType index_dtype, bool integer_labels);

  ModelHead head_;
  std::unique_ptr<PretrainedConfig> config_;
  const ModelFamily& family_;
  TrainStepConfig step_config_;
  Runtime& runtime_;
  double mlm_probability_;
  double label_smoothing_;  // ModelBuildOptions::label_smoothing
  std::map<Key, std::unique_ptr<Entry>> entries_;
};

}  // namespace kiln
