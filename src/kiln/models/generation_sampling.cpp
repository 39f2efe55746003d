// generate()'s warpers and the draw of the next token.
#include "kiln/models/generation_sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

constexpr double kRemoved = -std::numeric_limits<double>::infinity();

// softmax of a row (-inf gives 0).
std::vector<double> probabilities(const std::vector<double>& logits) {
  const double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> out(logits.size());
  double total = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) total += out[i] = std::exp(logits[i] - top);
  for (double& p : out) p /= total;
  return out;
}

}  // namespace

void sampling_options_check(const SamplingOptions& options) {
  check(options.temperature > 0.0 && std::isfinite(options.temperature), "--temperature",
        "must be a positive number, got ", options.temperature);
  check(options.top_k >= 0, "--top_k", "must not be negative, got ", options.top_k);
  check(options.top_p > 0.0 && options.top_p <= 1.0, "--top_p", "must be in (0, 1], got ",
        options.top_p);
}

std::vector<double> sampling_warp(std::vector<double> logits, const SamplingOptions& options) {
  sampling_options_check(options);
  if (options.temperature != 1.0) {
    for (double& logit : logits) logit /= options.temperature;
  }
  const auto count = static_cast<int64_t>(logits.size());
  if (options.top_k > 0 && options.top_k < count) {
    std::vector<double> sorted = logits;
    std::nth_element(sorted.begin(), sorted.begin() + (options.top_k - 1), sorted.end(),
                     std::greater<>());
    const double threshold = sorted[static_cast<size_t>(options.top_k - 1)];
    for (double& logit : logits) logit = logit < threshold ? kRemoved : logit;
  }
  if (options.top_p < 1.0) {
    // Ascending, as TopPLogitsWarper sorts: the tokens whose cumulative probability stays within
    // 1 - top_p go, but never the highest.
    std::vector<size_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return logits[a] < logits[b]; });
    const std::vector<double> probs = probabilities(logits);
    double cumulative = 0.0;
    for (size_t rank = 0; rank + 1 < order.size(); ++rank) {
      cumulative += probs[order[rank]];
      if (cumulative <= 1.0 - options.top_p) logits[order[rank]] = kRemoved;
    }
  }
  return logits;
}

int64_t sampling_next_token(const std::vector<double>& logits, const SamplingOptions& options,
                            std::mt19937_64& rng) {
  check(!logits.empty(), "generate", "no logits to choose a token from");
  if (!options.do_sample) {
    return std::max_element(logits.begin(), logits.end()) - logits.begin();
  }
  const std::vector<double> probs = probabilities(sampling_warp(logits, options));
  // A uniform double from the top 53 bits, spelled out so that a seed draws the same tokens
  // whatever the standard library (std::discrete_distribution's algorithm is not specified).
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  double cumulative = 0.0;
  int64_t last = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] == 0.0) continue;
    last = static_cast<int64_t>(i);
    cumulative += probs[i];
    if (u < cumulative) return last;
  }
  return last;  // u beyond the rounded total: the last token with a chance
}

}  // namespace kiln
