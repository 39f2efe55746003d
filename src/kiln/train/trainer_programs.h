// The compiled programs of a run: a training step and a forward pass per batch shape (one per
// bucket length), for the model head of the run's task, built the first time a shape is seen
// and counted, each new one explained by the input shape that changed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/train/task.h"
#include "kiln/train/train_step.h"

namespace kiln {

class ModelPrograms {
 public:
  // `note` receives one line per new program ("compiling ...").
  ModelPrograms(TaskKind task, BertConfig config, TrainStepConfig step_config, Backend& backend,
                std::function<void(const std::string&)> note);
  ~ModelPrograms();

  // The training step for batches of `batch_shape` ([batch, length]); labels are class ids or,
  // with integer_labels false, float regression targets.
  TrainStep& train_step(const Shape& batch_shape, DType index_dtype, bool integer_labels);

  // The forward pass without dropout at `params`: the task model's outputs, then the loss
  // when with_labels.
  std::vector<Tensor> forward(const TensorMap& params, const TensorMap& feeds, bool with_labels,
                              bool integer_labels);

  // Programs compiled so far, training and evaluation.
  int64_t compiles() const;
  const BertConfig& config() const { return config_; }

 private:
  struct Entry;
  using Key = std::tuple<bool, int64_t, int64_t, bool>;  // training, batch, length, labels
  Entry& entry(const Key& key, DType index_dtype, bool integer_labels);

  TaskKind task_;
  BertConfig config_;
  TrainStepConfig step_config_;
  Backend& backend_;
  std::function<void(const std::string&)> note_;
  std::map<Key, std::unique_ptr<Entry>> entries_;
  int64_t eval_compiles_ = 0;
};

}  // namespace kiln
