// Helpers shared by the tests: seeded random tensors and element-wise comparisons.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "kiln/ir/error.h"
#include "kiln/ir/tensor.h"

namespace kiln::testing {

// Uniform values in [low, high), rounded to the dtype; deterministic for a given rng state.
Tensor random_tensor(std::mt19937_64& rng, DType dtype, const Shape& shape, double low = -1.0,
                     double high = 1.0);

// Integers uniform in [low, high).
Tensor random_integers(std::mt19937_64& rng, DType dtype, const Shape& shape, int64_t low,
                       int64_t high);

// Empty when every |a - b| <= atol + rtol * |b| (NaNs must match), else a message naming the first
// mismatching element. Shapes must be equal.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol,
                            double atol);

// Whether this is CI's run (CI=true), where everything .ci/run installs must be there.
bool in_ci();

// A fresh, empty folder under gtest's temporary directory, named after the running test.
std::filesystem::path scratch_folder();

// Sets (or, with nullopt, unsets) an environment variable for the rest of a scope, then
// restores what it was.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnvironment() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A whole file's bytes as a string.
std::string read_text(const std::filesystem::path& path);

// The message of the kiln::Error that `fn` throws, or "no error".
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace kiln::testing

// EXPECT_ALLCLOSE(actual, expected, rtol, atol)
#define EXPECT_ALLCLOSE(actual, expected, rtol, atol)                                   \
  do {                                                                                  \
    std::string kiln_mismatch = ::kiln::testing::compare_tensors(actual, expected, rtol, atol); \
    EXPECT_TRUE(kiln_mismatch.empty()) << kiln_mismatch;                                \
  } while (0)

// Skips the test, saying `why` (what is missing and how to get it), unless `available`. In CI,
// which installs everything a test needs, it fails instead: a check that did not run is not
// green. Skips that depend on the machine (mounting a tmpfs) do not use it.
#define KILN_SKIP_UNLESS(available, why)                                              \
  do {                                                                                \
    if (!(available)) {                                                               \
      if (::kiln::testing::in_ci()) FAIL() << "CI=true, and this test's need is missing: " << why; \
      GTEST_SKIP() << why;                                                            \
    }                                                                                 \
  } while (false)
