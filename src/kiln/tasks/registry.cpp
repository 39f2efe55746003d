// The registered tasks: one line each.
#include "kiln/tasks/registry.h"

#include <array>
#include <filesystem>
#include <span>

#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "kiln/tasks/classification.h"
#include "kiln/tasks/clm.h"
#include "kiln/tasks/mlm.h"
#include "kiln/tasks/ner.h"
#include "kiln/tasks/qa.h"

namespace kiln {
namespace {

// One line per task.
std::span<const Task* const> tasks() {
  static const auto all = std::to_array<const Task*>({
      &classification_task(),
      &qa_task(),
      &mlm_task(),
      &ner_task(),
      &clm_task(),
  });
  return all;
}

std::string task_list() {
  std::string names;
  for (const Task* task : tasks()) names += (names.empty() ? "" : ", ") + std::string(task->name());
  return names;
}

}  // namespace

const Task& find_task(std::string_view name) {
  for (const Task* task : tasks()) {
    if (task->name() == name) return *task;
  }
  throw UsageError("[--task] '" + std::string(name) + "' is not one of: " + task_list());
}

const Task* task_for_head(ModelHead head) {
  for (const Task* task : tasks()) {
    if (task->head() == head) return task;
  }
  return nullptr;
}

std::string task_of_model(const std::string& config_path) {
  if (!std::filesystem::is_regular_file(config_path)) return "classification";
  std::unique_ptr<PretrainedConfig> config = model_config_read(config_path);
  if (config->architectures.empty()) return "classification";
  const std::string& architecture = config->architectures.front();
  std::optional<ModelHead> head = architecture_head(architecture);
  const Task* found = head ? task_for_head(*head) : nullptr;
  check_usage(found != nullptr, "--task", config_path, " names ", architecture,
              ", a model of no task Kiln runs; give --task (", task_list(), ")");
  return std::string(found->name());
}

}  // namespace kiln
