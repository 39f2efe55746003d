// BertConfig: Hugging Face defaults, files written by transformers 4 and 5, label maps, the
// written text, presets, and an error naming the file and key for each invalid config.
#include "kiln/io/bert_config.h"
#include "support/testing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

using testing::scratch_folder;

namespace fs = std::filesystem;

const fs::path kHfFixture = fs::path(KILN_SOURCE_DIR) / "tests/data/io/bert_config_hf.json";

// bert-base-uncased's config.json from the Hub (transformers 4 era).
constexpr const char* kBertBaseUncased = R"({
  "architectures": ["BertForMaskedLM"],
  "attention_probs_dropout_prob": 0.1,
  "gradient_checkpointing": false,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 30522
})";

// The default config exactly as bert_config_to_json writes it (and as transformers would: keys
// sorted, two-space indent, newline at the end).
constexpr const char* kDefaultJson = R"({
  "attention_probs_dropout_prob": 0.1,
  "classifier_dropout": null,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "id2label": {
    "0": "LABEL_0",
    "1": "LABEL_1"
  },
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "label2id": {
    "LABEL_0": 0,
    "LABEL_1": 1
  },
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "type_vocab_size": 2,
  "vocab_size": 30522
}
)";

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no kiln::Error thrown";
  return "";
}

// Writes `text` as config.json, reads it, and expects an error naming the file and each part.
void expect_read_error(const std::string& text, std::initializer_list<std::string> parts) {
  std::string path = (scratch_folder() / "config.json").string();
  std::ofstream(path) << text;
  std::string message = error_of([&] { bert_config_read(path); });
  EXPECT_TRUE(message.starts_with("[" + path + "] ")) << message;
  for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
}

TEST(BertConfig, EmptyObjectGivesHuggingFaceDefaults) {
  BertConfig config = bert_config_parse("{}", "config.json");
  EXPECT_EQ(config, BertConfig{});
  EXPECT_EQ(config.vocab_size, 30522);
  EXPECT_EQ(config.hidden_size, 768);
  EXPECT_EQ(config.num_hidden_layers, 12);
  EXPECT_EQ(config.num_attention_heads, 12);
  EXPECT_EQ(config.intermediate_size, 3072);
  EXPECT_EQ(config.hidden_act, "gelu");
  EXPECT_EQ(config.hidden_dropout_prob, 0.1);
  EXPECT_EQ(config.attention_probs_dropout_prob, 0.1);
  EXPECT_EQ(config.max_position_embeddings, 512);
  EXPECT_EQ(config.type_vocab_size, 2);
  EXPECT_EQ(config.initializer_range, 0.02);
  EXPECT_EQ(config.layer_norm_eps, 1e-12);
  EXPECT_EQ(config.pad_token_id, 0);
  EXPECT_EQ(config.position_embedding_type, "absolute");
  EXPECT_FALSE(config.classifier_dropout.has_value());
  EXPECT_FALSE(config.problem_type.has_value());
  EXPECT_EQ(config.num_labels(), 2);
  EXPECT_EQ(config.id2label, (std::vector<std::string>{"LABEL_0", "LABEL_1"}));
  EXPECT_EQ(config.model_type, "bert");
  EXPECT_EQ(config.head_size(), 64);
  EXPECT_TRUE(config.extra.empty());
}

TEST(BertConfig, ReadsTransformers4Config) {
  BertConfig config = bert_config_parse(kBertBaseUncased, "config.json");
  EXPECT_EQ(config.architectures, std::vector<std::string>{"BertForMaskedLM"});
  EXPECT_EQ(config.hidden_size, 768);
  EXPECT_EQ(config.position_embedding_type, "absolute");
  EXPECT_EQ(config.extra,
            (std::map<std::string, std::string>{{"gradient_checkpointing", "false"},
                                                {"transformers_version", "\"4.6.0.dev0\""},
                                                {"use_cache", "true"}}));
}

TEST(BertConfig, ReadsTheFileTransformers5Wrote) {
  BertConfig config = bert_config_read(kHfFixture.string());
  EXPECT_EQ(config.hidden_size, 256);
  EXPECT_EQ(config.num_attention_heads, 4);
  EXPECT_EQ(config.num_hidden_layers, 3);
  EXPECT_EQ(config.intermediate_size, 1024);
  EXPECT_EQ(config.vocab_size, 1000);
  EXPECT_EQ(config.hidden_dropout_prob, 0.2);
  EXPECT_EQ(config.classifier_dropout, 0.3);
  EXPECT_EQ(config.id2label, (std::vector<std::string>{"negative", "neutral", "positive"}));
  EXPECT_EQ(config.problem_type, "single_label_classification");
  EXPECT_EQ(config.architectures, std::vector<std::string>{"BertForSequenceClassification"});
  EXPECT_EQ(config.extra.at("use_cache"), "true");
  EXPECT_EQ(config.extra.at("bos_token_id"), "null");
  EXPECT_EQ(config.extra.at("tie_word_embeddings"), "true");
  EXPECT_TRUE(config.extra.contains("transformers_version"));
}

TEST(BertConfig, WritesTransformersLayout) {
  EXPECT_EQ(bert_config_to_json(BertConfig{}), kDefaultJson);
}

TEST(BertConfig, RoundTripKeepsEveryFieldAndUnknownKeys) {
  BertConfig config = bert_config_read(kHfFixture.string());
  config.torch_dtype = "bfloat16";
  config.pad_token_id = std::nullopt;
  std::string path = (scratch_folder() / "config.json").string();
  bert_config_write(path, config);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_EQ(bert_config_read(path), config);
  std::string text = bert_config_to_json(config);
  EXPECT_NE(text.find("  \"torch_dtype\": \"bfloat16\",\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  \"pad_token_id\": null,\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  \"tie_word_embeddings\": true,\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  \"label2id\": {\n    \"negative\": 0,\n    \"neutral\": 1,\n"),
            std::string::npos);
}

TEST(BertConfig, Transformers5DtypeKeyIsTorchDtype) {
  EXPECT_EQ(bert_config_parse(R"({"dtype": "bfloat16"})", "c").torch_dtype, "bfloat16");
  EXPECT_EQ(bert_config_parse(R"({"torch_dtype": "float32", "dtype": "float32"})", "c").torch_dtype,
            "float32");
  expect_read_error(R"({"torch_dtype": "float32", "dtype": "bfloat16"})",
                    {"\"torch_dtype\" is \"float32\" but \"dtype\" is \"bfloat16\""});
}

TEST(BertConfigLabels, NumLabelsAloneNamesThemLikeTransformers) {
  BertConfig config = bert_config_parse(R"({"num_labels": 3})", "c");
  EXPECT_EQ(config.id2label, (std::vector<std::string>{"LABEL_0", "LABEL_1", "LABEL_2"}));
  EXPECT_EQ(bert_config_to_json(config).find("num_labels"), std::string::npos);
  config.set_num_labels(1);
  EXPECT_EQ(config.id2label, std::vector<std::string>{"LABEL_0"});
}

TEST(BertConfigLabels, Id2LabelKeysAreStringIdsInAnyOrder) {
  BertConfig config =
      bert_config_parse(R"({"id2label": {"1": "pos", "0": "neg"}, "num_labels": 2})", "c");
  EXPECT_EQ(config.id2label, (std::vector<std::string>{"neg", "pos"}));
  EXPECT_EQ(config.num_labels(), 2);
}

TEST(BertConfigLabels, Label2IdAloneGivesId2Label) {
  BertConfig config = bert_config_parse(R"({"label2id": {"b": 1, "a": 2, "c": 0}})", "c");
  EXPECT_EQ(config.id2label, (std::vector<std::string>{"c", "b", "a"}));
}

TEST(BertConfigLabels, Errors) {
  expect_read_error(R"({"id2label": {"0": "a", "2": "b"}})",
                    {"\"id2label\" has no class 1 (its ids must be 0 .. 1)"});
  expect_read_error(R"({"id2label": {"zero": "a"}})",
                    {"\"id2label\" key \"zero\" is not a class id"});
  expect_read_error(R"({"id2label": {"0": "a", "00": "b"}})",
                    {"\"id2label\" has class id 0 twice"});
  expect_read_error(R"({"id2label": {"0": 5}})", {"\"id2label\" must be a string, got 5"});
  expect_read_error(R"({"id2label": {}})", {"\"id2label\" is empty"});
  expect_read_error(R"({"id2label": {"0": "a", "1": "a"}})",
                    {"\"id2label\" names class 'a' twice"});
  expect_read_error(R"({"id2label": {"0": "a", "1": "b"}, "num_labels": 3})",
                    {"\"num_labels\" is 3 but \"id2label\" has 2 classes"});
  expect_read_error(R"({"id2label": {"0": "a", "1": "b"}, "label2id": {"a": 1, "b": 0}})",
                    {"\"label2id\" maps 'a' to 1 but \"id2label\" does not map 1 to it"});
  expect_read_error(R"({"id2label": {"0": "a", "1": "b"}, "label2id": {"a": 0}})",
                    {"\"label2id\" has 1 labels but \"id2label\" has 2"});
  expect_read_error(R"({"label2id": {"a": 0, "b": 0}})",
                    {"\"label2id\" maps 'b' to 0, which another label has"});
  expect_read_error(R"({"num_labels": 0})", {"\"num_labels\" must be at least 1, got 0"});
}

TEST(BertConfigErrors, HiddenSizeNotDivisibleByHeads) {
  expect_read_error(R"({"hidden_size": 768, "num_attention_heads": 5})",
                    {"hidden_size 768 is not a multiple of num_attention_heads 5"});
}

TEST(BertConfigErrors, UnsupportedActivationAndPositionEmbedding) {
  expect_read_error(R"({"hidden_act": "swish"})",
                    {"\"hidden_act\" \"swish\" is not supported (Kiln implements gelu, gelu_new, "
                     "gelu_pytorch_tanh, relu)"});
  expect_read_error(R"({"position_embedding_type": "relative_key"})",
                    {"\"position_embedding_type\" \"relative_key\" is not supported"});
  expect_read_error(R"({"model_type": "roberta"})",
                    {"\"model_type\" is \"roberta\", not \"bert\""});
}

TEST(BertConfigErrors, WrongTypes) {
  expect_read_error(R"({"hidden_size": "768"})",
                    {"\"hidden_size\" must be an integer, got \"768\""});
  expect_read_error(R"({"hidden_size": 768.0})", {"\"hidden_size\" must be an integer, got 768.0"});
  expect_read_error(R"({"layer_norm_eps": "tiny"})", {"\"layer_norm_eps\" must be a number"});
  expect_read_error(R"({"hidden_act": null})", {"\"hidden_act\" must be a string, got null"});
  expect_read_error(R"({"architectures": "Bert"})",
                    {"\"architectures\" must be an array of strings"});
  expect_read_error(R"([1, 2])", {"config is a JSON array, not an object"});
}

TEST(BertConfigErrors, OutOfRangeValues) {
  expect_read_error(R"({"num_hidden_layers": 0})",
                    {"\"num_hidden_layers\" must be positive, got 0"});
  expect_read_error(R"({"hidden_dropout_prob": 1.5})",
                    {"\"hidden_dropout_prob\" must be in [0, 1), got 1.5"});
  expect_read_error(R"({"classifier_dropout": -0.1})",
                    {"\"classifier_dropout\" must be in [0, 1)"});
  expect_read_error(R"({"layer_norm_eps": 0})", {"\"layer_norm_eps\" must be positive"});
  expect_read_error(R"({"pad_token_id": 30522})",
                    {"\"pad_token_id\" 30522 is outside the vocabulary [0, 30522)"});
  expect_read_error(R"({"problem_type": "ranking"})",
                    {"\"problem_type\" \"ranking\" is not one of regression"});
}

TEST(BertConfigErrors, InvalidJsonNamesTheLine) {
  expect_read_error("{\n  \"hidden_size\": 768,\n  oops\n}", {"invalid JSON", "line 3"});
}

TEST(BertConfigErrors, MissingFileAndBadWrites) {
  std::string path = (scratch_folder() / "absent.json").string();
  EXPECT_EQ(error_of([&] { bert_config_read(path); }), "[" + path + "] cannot open config");
  BertConfig config;
  config.num_attention_heads = 7;
  EXPECT_EQ(error_of([&] { bert_config_to_json(config); }),
            "[BertConfig] hidden_size 768 is not a multiple of num_attention_heads 7");
  EXPECT_THROW(bert_config_write(path, config), Error);  // checked before anything is written
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  config = BertConfig{};
  config.extra["hidden_size"] = "12";
  EXPECT_NE(error_of([&] { bert_config_to_json(config); }).find("is a field of the config"),
            std::string::npos);
  config.extra = {{"note", "{not json"}};
  EXPECT_NE(error_of([&] { bert_config_to_json(config); }).find("holds invalid JSON"),
            std::string::npos);
}

TEST(BertConfigPresets, MatchTheBenchmarkSizes) {
  struct Expected {
    const char* name;
    int64_t layers, hidden, heads, intermediate;
  };
  for (const Expected& e :
       {Expected{"tiny", 2, 128, 2, 512}, Expected{"mini", 4, 256, 4, 1024},
        Expected{"small", 4, 512, 8, 2048}, Expected{"medium", 8, 512, 8, 2048},
        Expected{"base", 12, 768, 12, 3072}, Expected{"large", 24, 1024, 16, 4096}}) {
    SCOPED_TRACE(e.name);
    BertConfig config = bert_config_preset(e.name);
    EXPECT_EQ(config.num_hidden_layers, e.layers);
    EXPECT_EQ(config.hidden_size, e.hidden);
    EXPECT_EQ(config.num_attention_heads, e.heads);
    EXPECT_EQ(config.intermediate_size, e.intermediate);
    EXPECT_EQ(config.vocab_size, 30522);
    EXPECT_EQ(config.max_position_embeddings, 512);
    EXPECT_EQ(config.type_vocab_size, 2);
    EXPECT_EQ(config.num_labels(), 2);
    EXPECT_EQ(config.head_size(), 64);
    EXPECT_NO_THROW(bert_config_check(config, e.name));
  }
  EXPECT_EQ(bert_config_preset("base"), BertConfig{});
  EXPECT_EQ(error_of([] { bert_config_preset("huge"); }),
            "[bert_config_preset] unknown preset 'huge' (tiny, mini, small, medium, base, large)");
}

// Two million levels: without the depth limit, dumping the unknown key's value (to keep it)
// recursed once per level and overflowed the stack (SIGSEGV).
TEST(BertConfig, DeeplyNestedJsonIsAnErrorNotAStackOverflow) {
  const size_t depth = 2'000'000;
  const std::string text =
      R"({"vocab_size": 30, "extra": )" + std::string(depth, '[') + std::string(depth, ']') + "}";
  EXPECT_EQ(error_of([&] { bert_config_parse(text, "deep.json"); }),
            "[deep.json] invalid JSON: nested deeper than 512 levels");
  // 511 levels under the top object is still fine.
  const std::string deep_ok =
      R"({"vocab_size": 30, "extra": )" + std::string(510, '[') + std::string(510, ']') + "}";
  EXPECT_EQ(bert_config_parse(deep_ok, "ok.json").extra.at("extra").size(), 1020u);
}

}  // namespace
}  // namespace kiln
