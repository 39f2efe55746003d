// The decoding loop: a prefill program, a one-token program, the cache handed from step to step.
#include "kiln/models/gpt2_generate.h"

#include <memory>
#include <random>

#include "kiln/ir/error.h"
#include "kiln/models/gpt2_generation.h"

namespace kiln {
namespace {

// One compiled decoding step with the model's weights.
struct CompiledStep {
  Graph graph;
  Gpt2DecodeStep step;
  std::unique_ptr<Executable> executable;

  CompiledStep(Backend& backend, const Gpt2Config& config, const Gpt2DecodeOptions& options,
               const ParameterSet& lm)
      : step(gpt2_decode_step(graph, config, options)) {
    check(step.params.names() == lm.names(), "generate",
          "the parameters are not a GPT2LMHeadModel's of this config");
    step.params.set_tensors(lm.tensors());
    executable = backend.compile(graph, {step.logits, step.present_key_values});
  }

  // The next-token logits of `ids` after `past` tokens; `cache` becomes the updated cache.
  std::vector<double> run(const std::vector<int64_t>& ids, int64_t past, Tensor& cache) {
    Tensor input = Tensor::from_doubles(step.input_ids.dtype(),
                                        {1, static_cast<int64_t>(ids.size())},
                                        std::vector<double>(ids.begin(), ids.end()));
    std::vector<Tensor> out = executable->run(step.params.arguments(
        {{"input_ids", input},
         {"past_length", Tensor::scalar(DType::i64, static_cast<double>(past))},
         {"past_key_values", cache}}));
    cache = std::move(out[1]);
    return out[0].to_doubles();
  }
};

}  // namespace

std::vector<int64_t> gpt2_generate(Backend& backend, const Gpt2Config& config,
                                   const ParameterSet& lm, const std::vector<int64_t>& prompt,
                                   const Gpt2GenerateOptions& options) {
  sampling_options_check(options.sampling);
  check(!prompt.empty(), "--prompt", "is empty: generation needs at least one token");
  check(options.max_new_tokens >= 0, "--max_new_tokens", "must not be negative, got ",
        options.max_new_tokens);
  const auto prompt_length = static_cast<int64_t>(prompt.size());
  check(prompt_length + options.max_new_tokens <= config.n_positions, "--max_new_tokens",
        options.max_new_tokens, " new tokens after a prompt of ", prompt_length,
        " exceed the model's n_positions (", config.n_positions, ")");
  std::vector<int64_t> generated;
  if (options.max_new_tokens == 0) return generated;

  Gpt2DecodeOptions decode;
  decode.max_length = prompt_length + options.max_new_tokens;
  decode.dtype = lm.dtype();
  decode.new_tokens = prompt_length;
  CompiledStep prefill(backend, config, decode, lm);
  decode.new_tokens = 1;
  CompiledStep step(backend, config, decode, lm);

  std::mt19937_64 rng(options.seed);
  Tensor cache(decode.dtype, gpt2_cache_shape(config, decode));
  std::vector<double> logits = prefill.run(prompt, 0, cache);
  while (true) {
    generated.push_back(sampling_next_token(logits, options.sampling, rng));
    if (static_cast<int64_t>(generated.size()) == options.max_new_tokens ||
        generated.back() == options.eos_token_id) {
      return generated;
    }
    const int64_t past = prompt_length + static_cast<int64_t>(generated.size()) - 1;
    logits = step.run({generated.back()}, past, cache);
  }
}

}  // namespace kiln
