// UsageError: the Error of a bad command line, which the CLI reports with exit code 2 (as
// argparse does) where a failed run exits with 1.
#pragma once

#include <sstream>

#include "kiln/ir/error.h"

namespace kiln {

// An unknown flag or value, a missing or conflicting argument; thrown by the argument layer.
class UsageError : public Error {
 public:
  using Error::Error;
};

// check() for the arguments of a command: throws UsageError("[where] " + the parts).
template <typename... Parts>
void check_usage(bool condition, std::string_view where, const Parts&... parts) {
  if (condition) return;
  std::ostringstream out;
  out << '[' << where << "] ";
  (out << ... << parts);
  throw UsageError(out.str());
}

}  // namespace kiln
