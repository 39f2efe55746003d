// The tokenizer fixture generators' formats (make_tokenizer_fixtures.py, make_bpe_fixtures.py):
// rows of encodings, transformers call options, fnv1a64 hashes, and one recorded case run.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/io/tokenizer.h"

namespace kiln::testing {

std::vector<std::string> split_lines(const std::string& text);

// The generators' fnv1a64: each value as 4 little-endian bytes (int32).
uint64_t fnv1a64(const std::vector<int64_t>& values);
std::string hex(uint64_t value, int digits);

template <typename T>
std::string joined(const std::vector<T>& values) {
  std::string out;
  for (const T& v : values) out += (out.empty() ? "" : " ") + std::to_string(v);
  return out;
}
std::string offsets_text(const std::vector<CharRange>& offsets);

// "ids | type ids | attention | special mask | start:end ... | words | sequences".
std::string row_text(const Encoding& e);

// A transformers call's keyword arguments as EncodeOptions.
EncodeOptions options_from(const nlohmann::json& json);

// "tokenizer texts + pairs options", for a failure's trace.
std::string describe_case(const nlohmann::json& c);

// One recorded case ({"texts", "pairs"?, "rows" and "sample", or "error"; "decoded"?}) run on
// `tokenizer` with `options`, its differences reported as gtest failures. Counts what it ran.
struct CaseCounts {
  size_t compared = 0;
  size_t errors = 0;
};
void check_tokenizer_case(const Tokenizer& tokenizer, const nlohmann::json& c,
                          const EncodeOptions& options, CaseCounts& counts);

}  // namespace kiln::testing
