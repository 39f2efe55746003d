// trainer_state.json: HF's field names, defaults and text layout.
#include "kiln/train/trainer_state.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "kiln/io/atomic_file.h"
#include "kiln/ir/error.h"
#include "kiln/train/log_python_json.h"

namespace kiln {
namespace {

template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Typed access to the keys of the parsed object, with errors naming the file and the key.
class StateReader {
 public:
  StateReader(const nlohmann::json& object, std::string_view where)
      : object_(object), where_(where) {}

  const nlohmann::json* find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  void integer(const char* key, int64_t& out) const {
    if (const nlohmann::json* value = find(key)) out = as_integer(key, *value);
  }

  void number(const char* key, double& out) const {
    if (const nlohmann::json* value = find(key)) out = as_number(key, *value);
  }

  void boolean(const char* key, bool& out) const {
    if (const nlohmann::json* value = find(key)) {
      expect(value->is_boolean(), key, "true or false", *value);
      out = value->get<bool>();
    }
  }

  void optional_integer(const char* key, std::optional<int64_t>& out) const {
    const nlohmann::json* value = find(key);
    if (value != nullptr && !value->is_null()) out = as_integer(key, *value);
  }

  void optional_number(const char* key, std::optional<double>& out) const {
    const nlohmann::json* value = find(key);
    if (value != nullptr && !value->is_null()) out = as_number(key, *value);
  }

  void optional_string(const char* key, std::optional<std::string>& out) const {
    const nlohmann::json* value = find(key);
    if (value == nullptr || value->is_null()) return;
    expect(value->is_string(), key, "a string or null", *value);
    out = value->get<std::string>();
  }

  void expect(bool ok, std::string_view key, std::string_view wanted,
              const nlohmann::json& value) const {
    if (ok) return;
    std::string shown = python_json_dumps(value);
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    fail(where_, "\"", key, "\" must be ", wanted, ", got ", value.type_name(), " ", shown);
  }

 private:
  int64_t as_integer(const char* key, const nlohmann::json& value) const {
    expect(value.is_number_integer(), key, "an integer", value);
    return value.get<int64_t>();
  }

  double as_number(const char* key, const nlohmann::json& value) const {
    expect(value.is_number(), key, "a number", value);
    return value.get<double>();
  }

  const nlohmann::json& object_;
  std::string_view where_;
};

}  // namespace

nlohmann::json log_history_entry(nlohmann::json logs, std::optional<double> epoch, int64_t step) {
  check(logs.is_object(), "log_history_entry", "logs must be a JSON object, got ",
        logs.type_name());
  if (epoch) logs["epoch"] = *epoch;
  logs["step"] = step;
  return logs;
}

std::string trainer_state_to_json(const TrainerState& state) {
  nlohmann::json object = {
      {"best_global_step", optional_json(state.best_global_step)},
      {"best_metric", optional_json(state.best_metric)},
      {"best_model_checkpoint", optional_json(state.best_model_checkpoint)},
      {"epoch", optional_json(state.epoch)},
      {"eval_steps", state.eval_steps},
      {"global_step", state.global_step},
      {"is_hyper_param_search", state.is_hyper_param_search},
      {"is_local_process_zero", state.is_local_process_zero},
      {"is_world_process_zero", state.is_world_process_zero},
      {"log_history", nlohmann::json(state.log_history)},
      {"logging_steps", state.logging_steps},
      {"max_steps", state.max_steps},
      {"num_input_tokens_seen", state.num_input_tokens_seen},
      {"num_train_epochs", state.num_train_epochs},
      {"save_steps", state.save_steps},
      {"stateful_callbacks", state.stateful_callbacks},
      {"total_flos", state.total_flos},
      {"train_batch_size", optional_json(state.train_batch_size)},
      {"trial_name", optional_json(state.trial_name)},
      {"trial_params", state.trial_params},
  };
  return python_json_dumps(object, 2) + "\n";
}

TrainerState trainer_state_from_json(std::string_view text, std::string_view where) {
  nlohmann::json object = python_json_loads(text, where);
  check(object.is_object(), where, "trainer state must be a JSON object, got ",
        object.type_name());
  StateReader reader(object, where);
  TrainerState state;
  reader.optional_number("epoch", state.epoch);
  reader.integer("global_step", state.global_step);
  reader.integer("max_steps", state.max_steps);
  reader.integer("logging_steps", state.logging_steps);
  reader.integer("eval_steps", state.eval_steps);
  reader.integer("save_steps", state.save_steps);
  reader.optional_integer("train_batch_size", state.train_batch_size);
  reader.integer("num_train_epochs", state.num_train_epochs);
  reader.integer("num_input_tokens_seen", state.num_input_tokens_seen);
  reader.number("total_flos", state.total_flos);
  reader.optional_number("best_metric", state.best_metric);
  reader.optional_integer("best_global_step", state.best_global_step);
  reader.optional_string("best_model_checkpoint", state.best_model_checkpoint);
  reader.boolean("is_local_process_zero", state.is_local_process_zero);
  reader.boolean("is_world_process_zero", state.is_world_process_zero);
  reader.boolean("is_hyper_param_search", state.is_hyper_param_search);
  reader.optional_string("trial_name", state.trial_name);
  if (const nlohmann::json* params = reader.find("trial_params")) {
    reader.expect(params->is_null() || params->is_object(), "trial_params", "an object or null",
                  *params);
    state.trial_params = *params;
  }
  if (const nlohmann::json* callbacks = reader.find("stateful_callbacks")) {
    // HF turns a null into {} when it loads the file.
    reader.expect(callbacks->is_null() || callbacks->is_object(), "stateful_callbacks",
                  "an object or null", *callbacks);
    if (callbacks->is_object()) state.stateful_callbacks = *callbacks;
  }
  if (const nlohmann::json* history = reader.find("log_history")) {
    reader.expect(history->is_array(), "log_history", "a list", *history);
    for (size_t i = 0; i < history->size(); ++i) {
      const nlohmann::json& entry = (*history)[i];
      reader.expect(entry.is_object(), "log_history[" + std::to_string(i) + "]", "an object",
                    entry);
      state.log_history.push_back(entry);
    }
  }
  return state;
}

void trainer_state_save(const TrainerState& state, const std::string& path) {
  write_file_atomically(path, trainer_state_to_json(state));
}

TrainerState trainer_state_load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), path, "cannot open trainer state");
  std::ostringstream text;
  text << in.rdbuf();
  return trainer_state_from_json(text.str(), path);
}

}  // namespace kiln
