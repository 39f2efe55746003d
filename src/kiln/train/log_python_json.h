// JSON text exactly as Python's json module writes it (float repr, separators, sort_keys,
// ensure_ascii), so trainer_state.json, *_results.json and the JSONL log diff cleanly against the
// files transformers writes.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln {

// Python's repr(float): the shortest digits that round-trip, positional for 1e-4 <= |x| < 1e16
// ("0.1", "100.0"), otherwise scientific with a signed exponent of at least two digits ("1e-05",
// "2.5e-05", "1e+16"); "nan", "inf", "-inf".
std::string python_float_repr(double value);

// Python's round(value, ndigits) for floats (ndigits >= 0): the double nearest to the decimal
// value correctly rounded, half to even, to ndigits places.
double python_round(double value, int ndigits);

// json.dumps(value, sort_keys=True, indent=indent); indent < 0 is Python's indent=None (one line,
// separators ", " and ": "). Integers and floats keep their JSON type (1 vs 1.0); non-finite
// floats are written NaN, Infinity, -Infinity as Python does; strings are ASCII with \uXXXX
// escapes. Throws Error for invalid UTF-8 or binary values.
std::string python_json_dumps(const nlohmann::json& value, int indent = -1);

// Parses one JSON document as Python's json.loads does, including the NaN, Infinity and
// -Infinity that Python writes. Errors start with "[where] invalid JSON: " and say line/column.
nlohmann::json python_json_loads(std::string_view text, std::string_view where);

}  // namespace kiln
