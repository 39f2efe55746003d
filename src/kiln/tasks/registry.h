// The tasks `kiln` runs, by --task name or by the head of a saved model's architectures.
#pragma once

#include <string_view>

#include "kiln/tasks/task.h"

namespace kiln {

// The task named `name` (--task); an Error naming the flag otherwise.
const Task& find_task(std::string_view name);
// The task whose model has `head`; null when no registered task trains it.
const Task* task_for_head(ModelHead head);

// The task of a trained model, by its config.json's architectures: ...ForSequenceClassification
// is classification, ...ForQuestionAnswering qa, ...ForMaskedLM mlm (and a task registered for
// ...ForTokenClassification or ...LMHeadModel / ...ForCausalLM takes those); classification
// for a config that names none. `config_path` may not exist (then classification: loading the
// model reports it). A UsageError says when the architectures name no task Kiln runs.
std::string task_of_model(const std::string& config_path);

}  // namespace kiln
