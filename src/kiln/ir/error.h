// Kiln's one exception type: every message starts with "[where]" naming the op, file or tensor.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Error("[where] " + the streamed parts), e.g. fail("dot_general", "lhs ", shape_str(a)).
template <typename... Parts>
[[noreturn]] void fail(std::string_view where, const Parts&... parts) {
  std::ostringstream out;
  out << '[' << where << "] ";
  (out << ... << parts);
  throw Error(out.str());
}

template <typename... Parts>
void check(bool condition, std::string_view where, const Parts&... parts) {
  if (!condition) fail(where, parts...);
}

}  // namespace kiln
