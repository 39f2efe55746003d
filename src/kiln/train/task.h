// What the Trainer needs to know about a task's data: how a split becomes batches and metrics.
// The loop, checkpoints and logging are the same for every task; the model head comes from the
// config's architectures (model_family.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/io/collate.h"
#include "kiln/train/train_step.h"

namespace kiln {

// The --task names; each has its recipe in src/kiln/tasks (tasks/registry.cpp).
std::span<const std::string_view> task_names();

// What a forward pass over a split gives: for each output, each row's values (the row's logits;
// a QA row has one value per token of its bucket), and the loss when the data has labels.
struct ForwardOutputs {
  std::vector<std::vector<std::vector<float>>> rows;  // [output][row] -> values
  double loss_sum = 0.0;  // batch losses weighted by their rows
  int64_t batches = 0;
  double seconds = 0.0;
};

// One split of a task's data as the Trainer feeds it: rows (examples, QA features or text
// blocks) that collate into batches of static shape.
class TaskData {
 public:
  virtual ~TaskData() = default;
  virtual const std::string& source() const = 0;
  virtual size_t size() const = 0;
  // Whether batches carry labels, so that a forward pass gives a loss.
  virtual bool has_labels() const = 0;
  // Integer labels (false only for regression targets).
  virtual bool integer_labels() const { return true; }
  // The feeds of `rows` padded to a batch of options.batch_size: input_ids, token_type_ids,
  // attention_mask and, with labels, the task's label inputs. `epoch` keys the random masks
  // of masked LM (evaluation passes -1).
  virtual TensorMap collate(std::span<const size_t> rows, const CollateOptions& options,
                            bool with_labels, int64_t epoch) const = 0;
  // The task's metrics (without prefix) from a forward pass over every row in order.
  virtual nlohmann::json metrics(const ForwardOutputs& outputs) const = 0;
};

}  // namespace kiln
