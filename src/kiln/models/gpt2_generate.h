// generate() for GPT2LMHeadModel on one prompt: the prompt in one pass (the prefill), then one
// position per new token with the key/value cache (gpt2_generation.h), each token chosen greedily
// or sampled as transformers does (generation_sampling.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/backends/backend.h"
#include "kiln/models/generation_sampling.h"
#include "kiln/models/gpt2_config.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {

struct Gpt2GenerateOptions {
  int64_t max_new_tokens = 20;
  SamplingOptions sampling;
  uint64_t seed = 42;                   // the generator of the draws when sampling
  std::optional<int64_t> eos_token_id;  // generation stops after it
};

// The tokens generated after `prompt` by the GPT2LMHeadModel whose loaded parameters `lm` holds,
// compiled and run by `backend`. The prompt and the new tokens must fit in n_positions (an Error
// naming --max_new_tokens otherwise).
std::vector<int64_t> gpt2_generate(Backend& backend, const Gpt2Config& config,
                                   const ParameterSet& lm, const std::vector<int64_t>& prompt,
                                   const Gpt2GenerateOptions& options);

}  // namespace kiln
