// Small JSON files of a checkpoint (scheduler.json, rng_state.json): reading a whole file and
// typed fields with errors that name the file and the key.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "kiln/ir/error.h"

namespace kiln {

// The file parsed as one JSON object; errors name the file.
nlohmann::json read_json_object(const std::string& path);

// object[key] as T (bool, an integer type, double or std::string); a missing key or a value of
// another JSON type is an error "[where] key 'key': ...".
template <typename T>
T json_field(const nlohmann::json& object, std::string_view key, std::string_view where) {
  auto found = object.find(key);
  if (found == object.end()) fail(where, "key '", key, "' is missing");
  bool fits;
  std::string_view expected;
  if constexpr (std::is_same_v<T, bool>) {
    fits = found->is_boolean();
    expected = "true or false";
  } else if constexpr (std::is_integral_v<T>) {
    fits = found->is_number_integer();
    expected = "an integer";
  } else if constexpr (std::is_floating_point_v<T>) {
    fits = found->is_number();
    expected = "a number";
  } else {
    fits = found->is_string();
    expected = "a string";
  }
  if (!fits) fail(where, "key '", key, "': expected ", expected, ", got ", found->dump());
  return found->template get<T>();
}

}  // namespace kiln
