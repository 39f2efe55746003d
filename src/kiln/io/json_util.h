// JSON parsing with Kiln errors: a syntax error names the file (or buffer) and the line/column.
#pragma once

#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kiln/ir/error.h"

namespace kiln {

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& error);

// Parses `text` as one JSON document (trailing whitespace allowed); `callback` as nlohmann's.
template <typename Json = nlohmann::json>
Json json_parse(std::string_view text, std::string_view where,
                typename Json::parser_callback_t callback = nullptr) {
  try {
    return Json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& error) {
    fail(where, "invalid JSON: ", json_error_text(error));
  }
}

}  // namespace kiln
