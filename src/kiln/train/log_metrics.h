// Final metrics as transformers prints and computes them: Trainer.log_metrics' table and
// trainer_utils.speed_metrics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln {

// The text Trainer.log_metrics prints: "***** <split> metrics *****", then "  key = value" per
// key in sorted order, keys left-aligned and values right-aligned to common widths. Values as
// HF's metrics_format: *_runtime as H:MM:SS.cc, total_flos in GF (>> 30), *_mem_* in MB (>> 20),
// floats rounded to 4 digits. Every line ends with "\n".
std::string format_metrics_table(std::string_view split, const nlohmann::json& metrics);

// speed_metrics(split, start_time, num_samples, num_steps, num_tokens): {split}_runtime
// rounded to 4 digits; {split}_samples_per_second, _steps_per_second and _tokens_per_second for
// the counts given, rounded to 3 (left out when the runtime is 0).
nlohmann::json speed_metrics(std::string_view split, double runtime_seconds,
                             std::optional<int64_t> num_samples,
                             std::optional<int64_t> num_steps,
                             std::optional<int64_t> num_tokens = std::nullopt);

}  // namespace kiln
