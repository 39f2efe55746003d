// Shared test helpers.
#include "support/testing.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kiln::testing {

Tensor random_tensor(std::mt19937_64& rng, DType dtype, const Shape& shape, double low,
                     double high) {
  std::uniform_real_distribution<double> dist(low, high);
  Tensor out(dtype, shape);
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, dist(rng));
  return out;
}

Tensor random_integers(std::mt19937_64& rng, DType dtype, const Shape& shape, int64_t low,
                       int64_t high) {
  std::uniform_int_distribution<int64_t> dist(low, high - 1);
  Tensor out(dtype, shape);
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, static_cast<double>(dist(rng)));
  return out;
}

std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol,
                            double atol) {
  std::ostringstream out;
  if (actual.shape() != expected.shape()) {
    out << "shape " << shape_str(actual.shape()) << " vs expected " << shape_str(expected.shape());
    return out.str();
  }
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.get(i);
    double b = expected.get(i);
    bool both_nan = std::isnan(a) && std::isnan(b);
    bool close = a == b || std::fabs(a - b) <= atol + rtol * std::fabs(b);
    if (!both_nan && !close) {
      out.precision(17);
      out << "element " << i << ": " << a << " vs expected " << b << " (rtol " << rtol
          << ", atol " << atol << ")";
      return out.str();
    }
  }
  return "";
}

std::filesystem::path scratch_folder() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path folder = std::filesystem::path(::testing::TempDir()) / "kiln" /
                                 (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace kiln::testing
