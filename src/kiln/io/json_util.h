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

// Deeper documents are refused: nlohmann's parser is iterative, but copying, comparing and
// dumping a value recurse once per level, and a file of 100,000 '[' would overflow the stack.
inline constexpr int kMaxJsonDepth = 512;

// Parses `text` as one JSON document (trailing whitespace allowed); `callback` as nlohmann's.
template <typename Json = nlohmann::json>
Json json_parse(std::string_view text, std::string_view where,
                typename Json::parser_callback_t callback = nullptr) {
  bool too_deep = false;
  auto guarded = [&](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
    if (depth >= kMaxJsonDepth) {
      too_deep = true;
      return false;  // discards the value: the document never grows deeper than this
    }
    return !callback || callback(depth, event, parsed);
  };
  Json value;
  try {
    value = Json::parse(text.begin(), text.end(), guarded);
  } catch (const nlohmann::json::exception& error) {
    fail(where, "invalid JSON: ", json_error_text(error));
  }
  if (too_deep) fail(where, "invalid JSON: nested deeper than ", kMaxJsonDepth, " levels");
  return value;
}

}  // namespace kiln
