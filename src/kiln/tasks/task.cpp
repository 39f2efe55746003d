// What every task shares: the default evaluation and the data-file helpers.
#include "kiln/tasks/task.h"

#include "kiln/ir/usage_error.h"

namespace kiln {

nlohmann::json Task::evaluate(Trainer& trainer, const TaskData& data,
                              const TrainingArguments& /*args*/) const {
  return trainer.evaluate(data, "eval");
}

const std::string& required_file(const std::optional<std::string>& file, const char* flag,
                                 const char* why) {
  check_usage(file.has_value(), flag, why);
  return *file;
}

void report_held_out(std::ostream& log, size_t held_out, size_t total, std::string_view unit,
                     const std::string& source, const TrainingArguments& args) {
  log << "validation: holding out " << held_out << " of the " << total << " " << unit << " of "
      << source << " for evaluation (--validation_split_percentage "
      << args.validation_split_percentage
      << "); give --validation_file FILE to evaluate on another file, or change the percentage\n";
}

}  // namespace kiln
