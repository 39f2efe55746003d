// Gpt2Config: transformers' defaults, the Hub's gpt2 config.json and one transformers 5 wrote,
// the written text read back, and an error naming the key for each config Kiln cannot build.
#include "kiln/models/gpt2_config.h"

#include <gtest/gtest.h>

#include <string>

#include "support/testing.h"

namespace kiln {
namespace {

// openai-community/gpt2's config.json from the Hub (transformers 2 era: n_ctx, no tie or pad key).
constexpr const char* kHubGpt2 = R"({
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "summary_activation": null,
  "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true,
  "summary_type": "cls_index",
  "summary_use_proj": true,
  "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
  "vocab_size": 50257
})";

TEST(Gpt2Config, DefaultsAreTransformers) {
  Gpt2Config config = gpt2_config_parse("{}", "empty");
  EXPECT_EQ(config, Gpt2Config());
  EXPECT_EQ(config.vocab_size, 50257);
  EXPECT_EQ(config.n_positions, 1024);
  EXPECT_EQ(config.inner_size(), 4 * 768);
  EXPECT_EQ(config.activation_function, "gelu_new");
  EXPECT_EQ(config.layer_norm_epsilon, 1e-5);
  EXPECT_EQ(config.eos_token_id, 50256);
  EXPECT_FALSE(config.pad_token_id.has_value());
  EXPECT_TRUE(config.tie_word_embeddings);
  EXPECT_EQ(config.num_labels(), 2);
}

TEST(Gpt2Config, ReadsTheHubsGpt2AndKeepsWhatItDoesNotInterpret) {
  Gpt2Config config = gpt2_config_parse(kHubGpt2, "gpt2/config.json");
  EXPECT_EQ(config.architectures, std::vector<std::string>{"GPT2LMHeadModel"});
  EXPECT_EQ(config.n_embd, 768);
  EXPECT_EQ(config.head_size(), 64);
  EXPECT_EQ(config.extra.at("n_ctx"), "1024");
  EXPECT_EQ(config.extra.at("summary_type"), "\"cls_index\"");
  EXPECT_TRUE(config.extra.contains("task_specific_params"));
  EXPECT_EQ(gpt2_config_parse(gpt2_config_to_json(config), "written"), config);
}

TEST(Gpt2Config, ReadsWhatTransformers5WroteAndWritesItBack) {
  const std::string path = std::string(KILN_SOURCE_DIR) + "/tests/data/gpt2/classifier/config.json";
  Gpt2Config config = gpt2_config_read(path);
  EXPECT_EQ(config.n_embd, 30);
  EXPECT_EQ(config.n_head, 5);
  EXPECT_EQ(config.n_inner, 41);
  EXPECT_EQ(config.n_positions, 24);
  EXPECT_EQ(config.pad_token_id, 96);
  EXPECT_EQ(config.num_labels(), 3);
  EXPECT_EQ(config.torch_dtype, "float32");  // transformers 5's "dtype"
  EXPECT_EQ(config.extra.at("use_cache"), "true");
  EXPECT_EQ(gpt2_config_parse(gpt2_config_to_json(config), "written"), config);
  Gpt2Config regression =
      gpt2_config_read(std::string(KILN_SOURCE_DIR) + "/tests/data/gpt2/regression/config.json");
  EXPECT_FALSE(regression.n_inner.has_value());
  EXPECT_EQ(regression.inner_size(), 4 * 18);
}

TEST(Gpt2Config, ErrorsNameTheKey) {
  auto error_for = [](const std::string& json) {
    return testing::error_of([&] { gpt2_config_parse(json, "config.json"); });
  };
  for (const auto& [json, needle] : std::vector<std::pair<std::string, std::string>>{
           {R"({"scale_attn_by_inverse_layer_idx": true})", "\"scale_attn_by_inverse_layer_idx\""},
           {R"({"reorder_and_upcast_attn": true})", "\"reorder_and_upcast_attn\""},
           {R"({"scale_attn_weights": false})", "\"scale_attn_weights\""},
           {R"({"add_cross_attention": true})", "\"add_cross_attention\""},
           {R"({"n_embd": 30, "n_head": 4})", "not a multiple of n_head"},
           {R"({"activation_function": "swish"})", "\"activation_function\" \"swish\""},
           {R"({"resid_pdrop": 1.0})", "\"resid_pdrop\""},
           {R"({"n_layer": 0})", "\"n_layer\" must be positive"},
           {R"({"pad_token_id": 50257})", "\"pad_token_id\" 50257"},
           {R"({"eos_token_id": [1, 2]})", "\"eos_token_id\" must be an integer"},
           {R"({"model_type": "bert"})", "\"model_type\" is \"bert\""}}) {
    SCOPED_TRACE(json);
    std::string message = error_for(json);
    EXPECT_NE(message.find("[config.json]"), std::string::npos) << message;
    EXPECT_NE(message.find(needle), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kiln
