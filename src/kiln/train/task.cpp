// Task names and the model head of each task, reduced to what the Trainer's programs need.
#include "kiln/train/task.h"

#include "kiln/ir/error.h"
#include "kiln/models/bert_heads.h"

namespace kiln {
namespace {

template <typename Model>
TaskModel parts(Model& model, std::vector<Value> outputs) {
  return TaskModel{std::move(outputs), model.loss, model.params.values(),
                   model.params.decay_flags()};
}

}  // namespace

TaskKind task_kind(std::string_view name) {
  if (name == "classification") return TaskKind::classification;
  if (name == "qa") return TaskKind::question_answering;
  if (name == "mlm") return TaskKind::masked_lm;
  fail("--task", "unknown task '", name, "'; the tasks are: classification, qa, mlm");
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
      return parts(model, {model.logits});
    }
    case TaskKind::question_answering: {
      BertQuestionAnswering model = bert_for_question_answering(graph, config, options);
      return parts(model, {model.start_logits, model.end_logits});
    }
    case TaskKind::masked_lm: {
      BertMaskedLM model = bert_for_masked_lm(graph, config, options);
      return parts(model, {});
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
