// KwargsReader: typed keys of a JSON object, with errors that name the flag and the key.
#include "kiln/train/lr_schedule_kwargs.h"

#include <algorithm>

#include "kiln/ir/error.h"

namespace kiln {

KwargsReader::KwargsReader(const nlohmann::json& kwargs, std::string_view where)
    : kwargs_(kwargs), where_(where) {
  check(kwargs.is_object(), where_, "expected a JSON object, got ", kwargs.dump());
}

const nlohmann::json* KwargsReader::find(std::string_view key) {
  known_.emplace(key);
  auto found = kwargs_.find(key);
  return found == kwargs_.end() ? nullptr : &*found;
}

void KwargsReader::number(std::string_view key, double& value) {
  const nlohmann::json* found = find(key);
  if (!found) return;
  check(found->is_number(), where_, "key '", key, "': expected a number, got ", found->dump());
  value = found->get<double>();
}

void KwargsReader::number(std::string_view key, std::optional<double>& value) {
  if (!kwargs_.contains(key) || kwargs_.at(std::string(key)).is_null()) {
    known_.emplace(key);
    return;
  }
  double set = 0.0;
  number(key, set);
  value = set;
}

void KwargsReader::integer(std::string_view key, int64_t& value) {
  const nlohmann::json* found = find(key);
  if (!found) return;
  check(found->is_number_integer(), where_, "key '", key, "': expected an integer, got ",
        found->dump());
  value = found->get<int64_t>();
}

void KwargsReader::integer(std::string_view key, std::optional<int64_t>& value) {
  if (!kwargs_.contains(key) || kwargs_.at(std::string(key)).is_null()) {
    known_.emplace(key);
    return;
  }
  int64_t set = 0;
  integer(key, set);
  value = set;
}

void KwargsReader::choice(std::string_view key, std::string& value,
                          std::initializer_list<std::string_view> choices) {
  const nlohmann::json* found = find(key);
  if (!found) return;
  std::string names;
  for (std::string_view name : choices)
    names += (names.empty() ? "'" : ", '") + std::string(name) + "'";
  const bool fits = found->is_string() && std::find(choices.begin(), choices.end(),
                                                    found->get<std::string>()) != choices.end();
  check(fits, where_, "key '", key, "': expected one of ", names, ", got ", found->dump());
  value = found->get<std::string>();
}

void KwargsReader::finish(std::string_view scheduler) const {
  for (const auto& [key, value] : kwargs_.items()) {
    if (known_.contains(key)) continue;
    std::string takes;
    for (const std::string& name : known_) takes += (takes.empty() ? "" : ", ") + name;
    fail(where_, "key '", key, "': the ", scheduler, " scheduler takes ",
         takes.empty() ? std::string("no arguments") : "only " + takes);
  }
}

}  // namespace kiln
