// DistilBertConfig: transformers' defaults and attribute_map aliases (config files written by
// transformers 5, make_distilbert_fixtures.py), the fixtures' configs, a Hub config of the
// transformers 4 era, the written text read back, and an error naming the key for each config
// Kiln cannot build.
#include "kiln/models/distilbert_config.h"

#include <gtest/gtest.h>

#include <string>

#include "support/testing.h"

namespace kiln {
namespace {

using testing::error_of;

const std::string kData = std::string(KILN_SOURCE_DIR) + "/tests/data/distilbert/";

// distilbert-base-uncased's config.json from the Hub; "tie_weights_" is a key no transformers
// class reads.
constexpr const char* kDistilBertBaseUncased = R"({
  "activation": "gelu",
  "architectures": ["DistilBertForMaskedLM"],
  "attention_dropout": 0.1,
  "dim": 768,
  "dropout": 0.1,
  "hidden_dim": 3072,
  "initializer_range": 0.02,
  "max_position_embeddings": 512,
  "model_type": "distilbert",
  "n_heads": 12,
  "n_layers": 6,
  "pad_token_id": 0,
  "qa_dropout": 0.1,
  "seq_classif_dropout": 0.2,
  "sinusoidal_pos_embds": false,
  "tie_weights_": true,
  "transformers_version": "4.10.0.dev0",
  "vocab_size": 30522
})";

TEST(DistilBertConfig, DefaultsAreTransformers) {
  // Every field of transformers' DistilBertConfig(); the keys of PretrainedConfig Kiln does not
  // interpret (return_dict, chunk_size_feed_forward, ...) land in extra.
  DistilBertConfig config = distilbert_config_read(kData + "configs/defaults.json");
  EXPECT_TRUE(config.extra.contains("chunk_size_feed_forward"));
  config.extra.clear();
  EXPECT_EQ(config, DistilBertConfig{});
}

TEST(DistilBertConfig, ReadsConfigsTransformersWrote) {
  DistilBertConfig config = distilbert_config_read(kData + "classifier/config.json");
  EXPECT_EQ(config.dim, 30);
  EXPECT_EQ(config.n_heads, 5);
  EXPECT_EQ(config.head_size(), 6);
  EXPECT_EQ(config.n_layers, 2);
  EXPECT_EQ(config.hidden_dim, 37);
  EXPECT_EQ(config.vocab_size, 101);
  EXPECT_EQ(config.max_position_embeddings, 40);
  EXPECT_EQ(config.num_labels(), 3);
  EXPECT_EQ(config.architectures,
            std::vector<std::string>{"DistilBertForSequenceClassification"});
  EXPECT_EQ(config.torch_dtype, "float32");  // transformers 5's "dtype"
  EXPECT_FALSE(config.problem_type);
  config = distilbert_config_read(kData + "multi_label/config.json");
  EXPECT_EQ(config.activation, "relu");
  EXPECT_EQ(config.problem_type, "multi_label_classification");
}

// hidden_size, num_attention_heads and num_hidden_layers set dim, n_heads and n_layers, as
// transformers reads them (aliased_read.json: what it made of aliased.json).
TEST(DistilBertConfig, AttributeMapAliasesReadAsTransformers) {
  DistilBertConfig aliased = distilbert_config_read(kData + "configs/aliased.json");
  DistilBertConfig read = distilbert_config_read(kData + "configs/aliased_read.json");
  EXPECT_EQ(aliased.dim, read.dim);
  EXPECT_EQ(aliased.n_heads, read.n_heads);
  EXPECT_EQ(aliased.n_layers, read.n_layers);
  EXPECT_EQ(aliased.hidden_dim, read.hidden_dim);
  EXPECT_EQ(aliased.id2label, read.id2label);
  EXPECT_EQ(read.dim, 48);
  EXPECT_TRUE(aliased.extra.empty());  // the aliases are fields, not extra keys
  // Both names with one value are one field; with two values, an error naming both.
  EXPECT_EQ(distilbert_config_parse(R"({"dim": 48, "hidden_size": 48})", "c").dim, 48);
  EXPECT_EQ(error_of([] { distilbert_config_parse(R"({"n_heads": 4, "num_attention_heads": 6})",
                                                   "c.json"); }),
            "[c.json] \"num_attention_heads\" is 6 but \"n_heads\" is 4 (transformers reads "
            "them as one field)");
}

TEST(DistilBertConfig, AHubConfigRoundTrips) {
  DistilBertConfig config = distilbert_config_parse(kDistilBertBaseUncased, "hub");
  EXPECT_EQ(config.architectures, std::vector<std::string>{"DistilBertForMaskedLM"});
  EXPECT_EQ(config.extra.at("tie_weights_"), "true");
  EXPECT_TRUE(config.tie_word_embeddings);
  const std::string text = distilbert_config_to_json(config);
  EXPECT_EQ(text.find("hidden_size"), std::string::npos);  // written by HF's names only
  EXPECT_NE(text.find("\"tie_weights_\": true"), std::string::npos);
  EXPECT_EQ(distilbert_config_parse(text, "written"), config);

  config.set_num_labels(4);
  config.problem_type = "regression";
  config.tie_word_embeddings = false;
  config.pad_token_id.reset();
  EXPECT_EQ(distilbert_config_parse(distilbert_config_to_json(config), "written"), config);
}

TEST(DistilBertConfig, RefusesWhatKilnCannotBuild) {
  auto error = [](const char* json) {
    return error_of([&] { distilbert_config_parse(json, "config.json"); });
  };
  EXPECT_EQ(error(R"({"sinusoidal_pos_embds": true})"),
            "[config.json] \"sinusoidal_pos_embds\" true is not supported (Kiln implements "
            "learned position embeddings)");
  EXPECT_EQ(error(R"({"model_type": "bert"})"),
            "[config.json] \"model_type\" is \"bert\", not \"distilbert\"");
  EXPECT_EQ(error(R"({"dim": 30, "n_heads": 4})"),
            "[config.json] dim 30 is not a multiple of n_heads 4");
  EXPECT_EQ(error(R"({"activation": "swish"})"),
            "[config.json] \"activation\" \"swish\" is not supported (Kiln implements gelu, "
            "gelu_new, gelu_pytorch_tanh, relu)");
  EXPECT_EQ(error(R"({"seq_classif_dropout": 1.0})"),
            "[config.json] \"seq_classif_dropout\" must be in [0, 1), got 1");
  EXPECT_EQ(error(R"({"n_layers": 0})"), "[config.json] \"n_layers\" must be positive, got 0");
  EXPECT_EQ(error(R"({"tie_word_embeddings": 1})"),
            "[config.json] \"tie_word_embeddings\" must be true or false, got 1");
  EXPECT_EQ(error(R"({"pad_token_id": 200, "vocab_size": 100})"),
            "[config.json] \"pad_token_id\" 200 is outside the vocabulary [0, 100)");
  EXPECT_EQ(error(R"({"problem_type": "ranking"})"),
            "[config.json] \"problem_type\" \"ranking\" is not one of regression, "
            "single_label_classification, multi_label_classification");
  EXPECT_EQ(error(R"([1, 2])"), "[config.json] config is a JSON array, not an object");
  DistilBertConfig config;
  config.extra["dim"] = "12";
  EXPECT_EQ(error_of([&] { distilbert_config_to_json(config); }),
            "[DistilBertConfig] extra key \"dim\" is a field of the config");
}

}  // namespace
}  // namespace kiln
