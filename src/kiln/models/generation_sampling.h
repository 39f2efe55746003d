// Choosing the next token from a row of logits as transformers' generate() does: greedy
// (do_sample false: the argmax), or sampling after its warpers, in its order: temperature,
// top-k, top-p.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace kiln {

// generate()'s arguments of the same names, with its defaults.
struct SamplingOptions {
  bool do_sample = false;
  double temperature = 1.0;  // > 0; 1 leaves the logits as they are
  int64_t top_k = 50;        // keep the k highest (ties at the k-th kept); 0 keeps all
  double top_p = 1.0;        // keep the smallest set of highest tokens whose probability is >= p
};

// Throws naming the flag (--temperature, --top_k, --top_p) for a value generate() refuses.
void sampling_options_check(const SamplingOptions& options);

// The warped logits of one row: divided by the temperature, then -inf outside the top k, then
// -inf outside the top p (TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper, each
// keeping at least one token).
std::vector<double> sampling_warp(std::vector<double> logits, const SamplingOptions& options);

// The next token of one row: the first maximal logit when not sampling (torch.argmax), else a
// draw from softmax(sampling_warp(logits)) with `rng`.
int64_t sampling_next_token(const std::vector<double>& logits, const SamplingOptions& options,
                            std::mt19937_64& rng);

}  // namespace kiln
