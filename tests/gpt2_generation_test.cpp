// Cached decoding (gpt2_generation.h) against transformers and against recomputing the prefix:
// greedy decoding of the fixture LM (tests/data/gpt2/lm) with the key/value cache, one prefill
// of the prompt and then one position per token, gives the tokens of transformers'
// generate(do_sample=False) on the same checkpoint and its logits at every step (1e-5 of their
// scale), and the logits of GPT2LMHeadModel run on the whole prefix at each step.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "golden_test_util.h"
#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/models/gpt2_generate.h"
#include "kiln/models/gpt2_generation.h"
#include "kiln/models/gpt2_pretrained.h"
#include "support/testing.h"

namespace kiln {
namespace {

const std::string kDir = std::string(KILN_SOURCE_DIR) + "/tests/data/gpt2/lm";

int64_t argmax(const Tensor& logits) {
  int64_t best = 0;
  for (int64_t i = 1; i < logits.numel(); ++i) best = logits.get(i) > logits.get(best) ? i : best;
  return best;
}

Tensor ids_tensor(const std::vector<int64_t>& ids) {
  return Tensor::from_doubles(DType::i64, {1, static_cast<int64_t>(ids.size())},
                              std::vector<double>(ids.begin(), ids.end()));
}

// One cached step's graph for `new_tokens` tokens, its weights loaded.
struct CachedStep {
  Graph graph;
  Gpt2DecodeStep step;
  CachedStep(const Gpt2Config& config, const Gpt2DecodeOptions& options)
      : step(gpt2_decode_step(graph, config, options)) {
    gpt2_load_weights(step.params, kDir);
  }
};

// GPT2LMHeadModel's next-token logits after the whole prefix `ids`, without a cache.
Tensor recomputed_logits(const Gpt2Config& config, const std::vector<int64_t>& ids) {
  BertBuildOptions options;
  options.seq_len = static_cast<int64_t>(ids.size());
  options.with_labels = false;
  Graph graph;
  Gpt2CausalLM model = gpt2_lm_head_model(graph, config, options);
  gpt2_load_weights(model.params, kDir);
  Tensor mask = Tensor::from_doubles(DType::i64, {1, options.seq_len},
                                     std::vector<double>(ids.size(), 1.0));
  Tensor logits = evaluate_reference(graph, {model.logits},
                                     model.params.arguments({{"input_ids", ids_tensor(ids)},
                                                             {"attention_mask", mask}}))[0];
  const int64_t vocab = config.vocab_size;
  std::vector<double> last(static_cast<size_t>(vocab));
  for (int64_t v = 0; v < vocab; ++v) last[v] = logits.get((options.seq_len - 1) * vocab + v);
  return Tensor::from_doubles(DType::f32, {1, vocab}, last);
}

// transformers' logits of step `index` ([1, new, vocab] in the fixture) as [1, vocab].
Tensor expected_step(const Tensor& logits, int64_t index) {
  const int64_t vocab = logits.shape()[2];
  std::vector<double> row(static_cast<size_t>(vocab));
  for (int64_t v = 0; v < vocab; ++v) row[v] = logits.get(index * vocab + v);
  return Tensor::from_doubles(DType::f32, {1, vocab}, row);
}

TEST(Gpt2Generation, CachedGreedyDecodingMatchesTransformersAndRecomputation) {
  const Gpt2Config config = gpt2_config_read(kDir + "/config.json");
  SafetensorsFile fixture(kDir + "/generate.safetensors");
  for (int prompt_index : {0, 1}) {
    SCOPED_TRACE("prompt " + std::to_string(prompt_index));
    const std::string suffix = "." + std::to_string(prompt_index);
    const Tensor prompt = fixture.to_tensor("prompt" + suffix);
    const Tensor tokens = fixture.to_tensor("tokens" + suffix);
    const Tensor logits = fixture.to_tensor("logits" + suffix);
    const int64_t prompt_length = prompt.shape()[1], generated = tokens.shape()[1];
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < prompt_length; ++i) ids.push_back(static_cast<int64_t>(prompt.get(i)));

    Gpt2DecodeOptions options;
    options.max_length = prompt_length + generated + 2;  // room left over: unused positions
    options.new_tokens = prompt_length;
    CachedStep prefill(config, options);
    options.new_tokens = 1;
    CachedStep decode(config, options);

    Tensor cache(DType::f32, gpt2_cache_shape(config, options));
    for (int64_t index = 0; index < generated; ++index) {
      CachedStep& current = index == 0 ? prefill : decode;
      std::vector<int64_t> fed = index == 0 ? ids : std::vector<int64_t>{ids.back()};
      const int64_t past = index == 0 ? 0 : static_cast<int64_t>(ids.size()) - 1;
      std::vector<Tensor> out = evaluate_reference(
          current.graph, {current.step.logits, current.step.present_key_values},
          current.step.params.arguments({{"input_ids", ids_tensor(fed)},
                                         {"past_length", Tensor::scalar(DType::i64, past)},
                                         {"past_key_values", cache}}));
      cache = out[1];
      const Tensor want = expected_step(logits, index);
      const double tolerance = 1e-5 * testing::max_abs(want);
      std::string mismatch = testing::compare_tensors(out[0], want, 0.0, tolerance);
      EXPECT_TRUE(mismatch.empty()) << "step " << index << " vs transformers: " << mismatch;
      mismatch = testing::compare_tensors(out[0], recomputed_logits(config, ids), 0.0, tolerance);
      EXPECT_TRUE(mismatch.empty()) << "step " << index << " vs recomputation: " << mismatch;
      ids.push_back(argmax(out[0]));
      EXPECT_EQ(ids.back(), static_cast<int64_t>(tokens.get(index))) << "step " << index;
    }
  }
}

// The decoding loop of gpt2_generate on the reference and CPU backends: transformers' greedy
// tokens; sampling with a seed is reproducible; the prompt and new tokens must fit n_positions.
TEST(Gpt2Generation, GenerateGivesTransformersGreedyTokensOnEveryHostBackend) {
  const Gpt2Config config = gpt2_config_read(kDir + "/config.json");
  Graph graph;
  BertBuildOptions build;
  build.with_labels = false;
  build.seq_len = 1;  // only the parameters are used
  Gpt2CausalLM lm = gpt2_lm_head_model(graph, config, build);
  gpt2_load_weights(lm.params, kDir);
  SafetensorsFile fixture(kDir + "/generate.safetensors");
  std::unique_ptr<Backend> reference = make_reference_backend(), cpu = make_cpu_backend();
  for (Backend* backend : {reference.get(), cpu.get()}) {
    SCOPED_TRACE(std::string(backend->name()));
    for (int index : {0, 1}) {
      const Tensor prompt = fixture.to_tensor("prompt." + std::to_string(index));
      const Tensor tokens = fixture.to_tensor("tokens." + std::to_string(index));
      std::vector<int64_t> ids, expected;
      for (int64_t i = 0; i < prompt.numel(); ++i) {
        ids.push_back(static_cast<int64_t>(prompt.get(i)));
      }
      for (int64_t i = 0; i < tokens.numel(); ++i) {
        expected.push_back(static_cast<int64_t>(tokens.get(i)));
      }
      Gpt2GenerateOptions options;
      options.max_new_tokens = tokens.numel();
      options.eos_token_id = config.eos_token_id;
      EXPECT_EQ(gpt2_generate(*backend, config, lm.params, ids, options), expected);
    }
  }
  Gpt2GenerateOptions sampled;
  sampled.sampling.do_sample = true;
  sampled.max_new_tokens = 12;
  std::vector<int64_t> first = gpt2_generate(*cpu, config, lm.params, {5, 6}, sampled);
  EXPECT_EQ(first.size(), 12u);
  EXPECT_EQ(gpt2_generate(*cpu, config, lm.params, {5, 6}, sampled), first);
  sampled.max_new_tokens = config.n_positions - 1;
  EXPECT_NE(testing::error_of([&] { gpt2_generate(*cpu, config, lm.params, {5, 6}, sampled); })
                .find("[--max_new_tokens] 23 new tokens after a prompt of 2 exceed"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
