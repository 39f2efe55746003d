// For tests that check Kiln's output with transformers at test time: the test python
// (KILN_TEST_PYTHON on KILN_TEST_PYTHONPATH, which scripts/setup.sh provides) and a skip, or in CI
// a failure, without it.
#pragma once

#include <string>

#include "shell_test_util.h"
#include "support/testing.h"

namespace kiln::testing {

inline std::string python_command() {
  return std::string("PYTHONPATH='") + KILN_TEST_PYTHONPATH + "' '" + KILN_TEST_PYTHON + "'";
}

inline bool has_transformers() {
  static const bool found =
      run_command(python_command() + " -c 'import torch, transformers'").exit_code == 0;
  return found;
}

}  // namespace kiln::testing

#define KILN_REQUIRE_TRANSFORMERS()                                                            \
  KILN_SKIP_UNLESS(::kiln::testing::has_transformers(),                                       \
                   "no torch + transformers for " KILN_TEST_PYTHON                             \
                   ": run scripts/setup.sh, or configure -DKILN_TEST_PYTHON=... "              \
                   "-DKILN_TEST_PYTHONPATH=...")
