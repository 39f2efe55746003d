// Trainer.log_metrics' table and speed_metrics, with Python's number formatting.
#include "kiln/train/log_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kiln/ir/error.h"
#include "kiln/train/log_python_json.h"

namespace kiln {
namespace {

// str(datetime.timedelta(seconds=s)) for whole seconds: "H:MM:SS", "1 day, H:MM:SS".
std::string timedelta_text(int64_t seconds) {
  int64_t days = seconds >= 0 ? seconds / 86400 : -((-seconds + 86399) / 86400);
  int64_t rest = seconds - days * 86400;
  char clock[48];
  std::snprintf(clock, sizeof clock, "%lld:%02lld:%02lld", static_cast<long long>(rest / 3600),
                static_cast<long long>(rest / 60 % 60), static_cast<long long>(rest % 60));
  if (days == 0) return clock;
  return std::to_string(days) + (std::abs(days) == 1 ? " day, " : " days, ") + clock;
}

// HF's _secs2timedelta: whole seconds as a timedelta, then two digits of the fraction, truncated.
std::string secs2timedelta(double secs) {
  double whole = std::trunc(secs);
  auto hundredths = static_cast<int64_t>(std::abs(secs - whole) * 100);
  char fraction[24];
  std::snprintf(fraction, sizeof fraction, ".%02lld", static_cast<long long>(hundredths));
  return timedelta_text(static_cast<int64_t>(whole)) + fraction;
}

// Python's int(v) >> shift for a float v, exact for any magnitude.
std::string shifted_integer(double value, int shift) {
  char text[400];
  std::snprintf(text, sizeof text, "%.0f", std::floor(std::trunc(value) / std::ldexp(1.0, shift)));
  return text;
}

// How a value prints: `width_text` is str(value), used for the column width; `shown` is what
// format(value, ">w") prints (they differ for booleans only).
struct Cell {
  std::string width_text;
  std::string shown;
};

Cell format_value(const std::string& key, const nlohmann::json& value) {
  std::string text;
  if (value.is_number() && key.find("_mem_") != std::string::npos) {
    check(value.is_number_integer(), "log_metrics", "\"", key, "\" must be an integer byte count");
    text = std::to_string(value.get<int64_t>() >> 20) + "MB";
  } else if (value.is_number() && key.find("_runtime") != std::string::npos) {
    text = secs2timedelta(value.get<double>());
  } else if (value.is_number() && key == "total_flos") {
    text = shifted_integer(value.get<double>(), 30) + "GF";
  } else if (value.is_number_float()) {
    text = python_float_repr(python_round(value.get<double>(), 4));
  } else if (value.is_boolean()) {
    // str(True) is "True", but format(True, ">5") goes through int.__format__: "    1".
    return {value.get<bool>() ? "True" : "False", value.get<bool>() ? "1" : "0"};
  } else if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_null()) {
    text = "None";
  } else {
    text = python_json_dumps(value);
  }
  return {text, text};
}

// len() of a Python str: code points, not UTF-8 bytes.
size_t code_points(std::string_view text) {
  size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

}  // namespace

std::string format_metrics_table(std::string_view split, const nlohmann::json& metrics) {
  check(metrics.is_object(), "log_metrics", "metrics must be a JSON object, got ",
        metrics.type_name());
  std::string out = "***** " + std::string(split) + " metrics *****\n";
  std::vector<std::pair<std::string, Cell>> rows;
  size_t key_width = 0, value_width = 0;
  for (const auto& [key, value] : metrics.items()) {  // sorted: nlohmann keeps keys in a map
    rows.emplace_back(key, format_value(key, value));
    key_width = std::max(key_width, code_points(key));
    value_width = std::max(value_width, code_points(rows.back().second.width_text));
  }
  for (const auto& [key, cell] : rows) {
    out += "  " + key + std::string(key_width - code_points(key), ' ') + " = ";
    size_t shown = code_points(cell.shown);
    if (shown < value_width) out += std::string(value_width - shown, ' ');
    out += cell.shown + "\n";
  }
  return out;
}

nlohmann::json speed_metrics(std::string_view split, double runtime_seconds,
                             std::optional<int64_t> num_samples,
                             std::optional<int64_t> num_steps,
                             std::optional<int64_t> num_tokens) {
  std::string prefix(split);
  nlohmann::json result = {{prefix + "_runtime", python_round(runtime_seconds, 4)}};
  if (runtime_seconds == 0) return result;
  auto rate = [&](const char* name, std::optional<int64_t> count) {
    if (count) {
      result[prefix + name] = python_round(static_cast<double>(*count) / runtime_seconds, 3);
    }
  };
  rate("_samples_per_second", num_samples);
  rate("_steps_per_second", num_steps);
  rate("_tokens_per_second", num_tokens);
  return result;
}

}  // namespace kiln
