// Task names and the model head of each task, reduced to what the Trainer's programs need.
#include "kiln/train/task.h"

#include <algorithm>
#include <array>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert_heads.h"

namespace kiln {
namespace {

template <typename Model>
TaskModel parts(Model& model, std::vector<Value> outputs, Value loss_count) {
  return TaskModel{std::move(outputs), model.loss, loss_count, model.params.values(),
                   model.params.decay_flags()};
}

// How many of `values` differ from `ignored` (labels a cross entropy counts), as f32.
Value count_unlike(Value values, double ignored) {
  return reduce_sum(cast(ne(values, scalar_like(values, ignored)), DType::f32));
}

constexpr std::array<std::string_view, 3> kTaskNames = {"classification", "qa", "mlm"};

}  // namespace

std::span<const std::string_view> task_names() { return kTaskNames; }

TaskKind task_kind(std::string_view name) {
  auto found = std::find(kTaskNames.begin(), kTaskNames.end(), name);
  if (found == kTaskNames.end()) {
    std::string names;
    for (std::string_view task : kTaskNames) {
      names += (names.empty() ? "" : ", ") + std::string(task);
    }
    fail("--task", "'", name, "' is not one of: ", names);
  }
  return static_cast<TaskKind>(found - kTaskNames.begin());
}

std::string task_architecture(TaskKind kind) {
  switch (kind) {
    case TaskKind::classification:
      return "BertForSequenceClassification";
    case TaskKind::question_answering:
      return "BertForQuestionAnswering";
    case TaskKind::masked_lm:
      return "BertForMaskedLM";
  }
  fail("task", "unknown task kind");
}

TaskModel build_task_model(TaskKind kind, Graph& graph, const BertConfig& config,
                           const BertBuildOptions& options) {
  switch (kind) {
    case TaskKind::classification: {
      BertClassifier model = bert_for_sequence_classification(graph, config, options);
      Value count;
      if (options.with_labels) {
        // Cross entropy counts the labelled rows; the regression and multi-label losses the
        // rows with tokens (real_rows_mean).
        Value first_tokens = slice(model.inputs.attention_mask, {0, 0}, {options.batch_size, 1});
        count = model.labels.dtype() == DType::f32 ? count_unlike(first_tokens, 0.0)
                                                   : count_unlike(model.labels, -100.0);
      }
      return parts(model, {model.logits}, count);
    }
    case TaskKind::question_answering: {
      BertQuestionAnswering model = bert_for_question_answering(graph, config, options);
      Value count;
      if (options.with_labels) {  // start positions past the sequence are ignored
        Value inside = lt(model.start_positions,
                          scalar_like(model.start_positions, static_cast<double>(options.seq_len)));
        count = reduce_sum(cast(inside, DType::f32));
      }
      return parts(model, {model.start_logits, model.end_logits}, count);
    }
    case TaskKind::masked_lm: {
      BertMaskedLM model = bert_for_masked_lm(graph, config, options);
      Value count;
      if (options.with_labels) count = count_unlike(model.labels, -100.0);
      return parts(model, {}, count);
    }
  }
  fail("task", "unknown task kind");
}

ParameterSet task_parameters(TaskKind kind, Graph& graph, const BertConfig& config) {
  BertBuildOptions options;
  options.seq_len = 1;
  options.with_labels = false;
  switch (kind) {
    case TaskKind::classification:
      return bert_for_sequence_classification(graph, config, options).params;
    case TaskKind::question_answering:
      return bert_for_question_answering(graph, config, options).params;
    case TaskKind::masked_lm:
      return bert_for_masked_lm(graph, config, options).params;
  }
  fail("task", "unknown task kind");
}

}  // namespace kiln
