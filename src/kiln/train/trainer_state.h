// TrainerState with transformers' trainer_state.json schema (trainer_callback.py), written as HF
// writes it (json.dumps(indent=2, sort_keys=True) + "\n") and read back to resume a run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln {

// Field for field HF's dataclass, with its defaults. One step is one optimizer update.
struct TrainerState {
  std::optional<double> epoch;  // fractional: 1.5 is halfway through the second epoch
  int64_t global_step = 0;
  int64_t max_steps = 0;
  int64_t logging_steps = 500;
  int64_t eval_steps = 500;
  int64_t save_steps = 500;
  std::optional<int64_t> train_batch_size;
  int64_t num_train_epochs = 0;
  int64_t num_input_tokens_seen = 0;
  double total_flos = 0.0;
  // Objects such as {"epoch", "grad_norm", "learning_rate", "loss", "step"}; see log_history_entry.
  std::vector<nlohmann::json> log_history;
  std::optional<double> best_metric;
  std::optional<int64_t> best_global_step;
  std::optional<std::string> best_model_checkpoint;
  bool is_local_process_zero = true;
  bool is_world_process_zero = true;
  bool is_hyper_param_search = false;
  std::optional<std::string> trial_name;
  nlohmann::json trial_params = nullptr;
  // {"TrainerControl": {"args": {...}, "attributes": {}}, "EarlyStoppingCallback": {...}}.
  nlohmann::json stateful_callbacks = nlohmann::json::object();
};

// What Trainer.log appends to log_history: `logs` (an object) plus "epoch" when known, plus
// "step". The same object is one line of the JSONL log.
nlohmann::json log_history_entry(nlohmann::json logs, std::optional<double> epoch, int64_t step);

// The exact text of trainer_state.json.
std::string trainer_state_to_json(const TrainerState& state);

// Parses trainer_state.json text. Missing keys keep their defaults and unknown keys are ignored
// (other transformers versions add fields); a wrong type is an Error naming `where` and the key.
TrainerState trainer_state_from_json(std::string_view text, std::string_view where);

// Write (crash-safe: temporary file, sync, rename) and read `path`; errors name the file.
void trainer_state_save(const TrainerState& state, const std::string& path);
TrainerState trainer_state_load(const std::string& path);

}  // namespace kiln
