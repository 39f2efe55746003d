// TrainingArguments to and from JSON: argument files (HfArgumentParser.parse_json_file) and
// the training_args.json written into every checkpoint.
#include <iostream>

#include <nlohmann/json.hpp>

#include "kiln/io/atomic_file.h"
#include "kiln/train/checkpoint_json.h"
#include "kiln/train/log_python_json.h"
#include "kiln/train/training_arguments_fields.h"

namespace kiln {

void training_arguments_update(TrainingArguments& args, const nlohmann::json& object,
                               std::string_view where) {
  check(object.is_object(), where, "expected a JSON object of training arguments, got ",
        object.type_name());
  for (const auto& [key, value] : object.items()) {
    const ArgumentField* field = find_training_argument_field(key);
    if (const RenamedArgument* renamed = find_renamed_training_argument(key)) {
      std::cerr << "kiln: " << renamed->warning() << "\n";
      field = find_training_argument_field(renamed->name);
    }
    if (field == nullptr) fail(where, "unknown key '", key, "' (not a training argument)");
    argument_set_json(args, *field, value, where);
  }
}

void training_arguments_load_json(TrainingArguments& args, const std::string& path) {
  training_arguments_update(args, read_json_object(path), path);
}

nlohmann::json training_arguments_to_json(const TrainingArguments& args) {
  nlohmann::json object = nlohmann::json::object();
  for (const ArgumentField& field : training_argument_fields()) {
    object[std::string(field.name)] = argument_json(args, field);
  }
  return object;
}

void training_arguments_write_json(const std::string& path, const TrainingArguments& args) {
  write_file_atomically(path, python_json_dumps(training_arguments_to_json(args), 2) + "\n");
}

}  // namespace kiln
