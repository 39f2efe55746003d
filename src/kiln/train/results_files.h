// The metrics files transformers' Trainer.save_metrics leaves in output_dir: <split>_results.json
// and all_results.json (the union of every split saved so far).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kiln {

// Writes output_dir/<split>_results.json as json.dump(metrics, indent=4, sort_keys=True) (no
// trailing newline, as HF), and when `combined` merges `metrics` into all_results.json (its
// keys overwrite the existing ones). Files are replaced crash-safely; errors name the file.
void save_metrics(const std::string& output_dir, const std::string& split,
                  const nlohmann::json& metrics, bool combined = true);

}  // namespace kiln
