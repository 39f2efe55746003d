// generate()'s token choice: the warpers against transformers' TemperatureLogitsWarper,
// TopKLogitsWarper and TopPLogitsWarper on random logits with ties at the top-k threshold
// (tests/data/gpt2/warpers.safetensors, by make_gpt2_fixtures.py), greedy as torch.argmax, draws
// reproducible by seed and only ever of tokens the warpers keep, and the flags' errors.
#include "kiln/models/generation_sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "kiln/io/safetensors.h"
#include "support/testing.h"

namespace kiln {
namespace {

std::vector<double> row(const Tensor& matrix, int64_t index) {
  const int64_t width = matrix.shape()[1];
  std::vector<double> out;
  for (int64_t i = 0; i < width; ++i) out.push_back(matrix.get(index * width + i));
  return out;
}

TEST(GenerationSampling, WarpersMatchTransformers) {
  SafetensorsFile file(std::string(KILN_SOURCE_DIR) + "/tests/data/gpt2/warpers.safetensors");
  const Tensor logits = file.to_tensor("logits");
  int cases = 0;
  for (const std::string& name : file.names()) {
    if (name == "logits" || name.ends_with(".settings")) continue;
    const Tensor settings = file.to_tensor(name + ".settings");
    SamplingOptions options{.do_sample = true,
                            .temperature = settings.get(0),
                            .top_k = static_cast<int64_t>(settings.get(1)),
                            .top_p = settings.get(2)};
    const Tensor expected = file.to_tensor(name);
    for (int64_t r = 0; r < logits.shape()[0]; ++r) {
      // Row 1's ties straddle the top-p boundary, where the tokens removed depend on how
      // torch.sort orders equal values (unspecified); top-k keeps ties whole.
      if (r == 1 && options.top_p < 1.0) continue;
      std::vector<double> warped = sampling_warp(row(logits, r), options);
      std::vector<double> want = row(expected, r);
      for (size_t i = 0; i < want.size(); ++i) {
        if (std::isinf(want[i])) {
          EXPECT_TRUE(std::isinf(warped[i]) && warped[i] < 0) << name << " row " << r << " " << i;
        } else {
          EXPECT_NEAR(warped[i], want[i], 1e-6 * std::fabs(want[i]) + 1e-6)
              << name << " row " << r << " " << i;
        }
      }
    }
    ++cases;
  }
  EXPECT_EQ(cases, 6);
}

TEST(GenerationSampling, GreedyTakesTheFirstMaximum) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(sampling_next_token({0.5, 2.0, -1.0, 2.0}, SamplingOptions{}, rng), 1);
}

TEST(GenerationSampling, DrawsAreReproducibleAndStayInTheWarpedSet) {
  const std::vector<double> logits = {0.1, 3.0, 2.9, -2.0, 2.5, 0.0, 1.0};
  SamplingOptions options{.do_sample = true, .temperature = 1.5, .top_k = 3, .top_p = 1.0};
  auto draws = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<int64_t> out;
    for (int i = 0; i < 200; ++i) out.push_back(sampling_next_token(logits, options, rng));
    return out;
  };
  const std::vector<int64_t> first = draws(7);
  EXPECT_EQ(draws(7), first);
  EXPECT_NE(draws(8), first);
  EXPECT_EQ(std::set<int64_t>(first.begin(), first.end()), (std::set<int64_t>{1, 2, 4}));
  options.top_k = 1;  // sampling from one token is greedy
  std::mt19937_64 rng(3);
  EXPECT_EQ(sampling_next_token(logits, options, rng), 1);
}

TEST(GenerationSampling, FlagsOutsideTheirRangeAreNamed) {
  for (auto [options, flag] : {std::pair{SamplingOptions{.temperature = 0.0}, "--temperature"},
                               std::pair{SamplingOptions{.top_k = -1}, "--top_k"},
                               std::pair{SamplingOptions{.top_p = 0.0}, "--top_p"},
                               std::pair{SamplingOptions{.top_p = 1.5}, "--top_p"}}) {
    std::string message = testing::error_of([&] { sampling_options_check(options); });
    EXPECT_NE(message.find(std::string("[") + flag + "]"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kiln
