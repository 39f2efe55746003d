// GPT-2 checkpoints: HF's parameter names, order and weight decay; the renames transformers makes
// (a bare GPT2Model checkpoint, the causal-mask buffers older checkpoints carry, a stored tied
// lm_head.weight); a sharded checkpoint loads as its single file does; a folder with PyTorch
// weights only gets the command that converts it; a saved model loads back with the same logits
// (transformers_export_test loads such folders in transformers).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gpt2_test_util.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/models/bert_pretrained.h"
#include "kiln/models/gpt2_heads.h"
#include "kiln/models/gpt2_pretrained.h"
#include "support/testing.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::Gpt2Fixture;

std::map<std::string, Tensor> read_all(const std::string& path) {
  std::string file;
  return read_checkpoint_tensors(path, file);
}

BertBuildOptions without_labels(const Gpt2Fixture& fixture) {
  BertBuildOptions options = fixture.options;
  options.with_labels = false;
  return options;
}

Tensor logits_of(const ParameterSet& params, Value logits, const Gpt2Fixture& fixture) {
  std::map<std::string, Tensor> feeds = fixture.feeds();
  feeds.erase("labels");
  return evaluate_reference(params.graph(), {logits}, params.arguments(feeds))[0];
}

TEST(Gpt2Pretrained, NamesOrderAndDecayAreTransformers) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("classifier");
  Graph graph;
  Gpt2SequenceClassifier model =
      gpt2_for_sequence_classification(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.params.names(), fixture.parameter_order);
  EXPECT_EQ(model.params.get("transformer.h.1.attn.c_attn.weight").value.shape(),
            (Shape{30, 90}));  // Conv1D: [in, out]
  EXPECT_EQ(gpt2_architecture(model.params), "GPT2ForSequenceClassification");
  // The Trainer decays every weight but biases and LayerNorm parameters.
  for (const Parameter& param : model.params.parameters()) {
    const bool undecayed =
        param.name.ends_with(".bias") || param.name.find(".ln_") != std::string::npos;
    EXPECT_EQ(param.decay, !undecayed) << param.name;
  }
}

TEST(Gpt2Pretrained, CheckpointNamesAreAdaptedAsTransformersDoes) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("lm");
  std::map<std::string, Tensor> weights = read_all(fixture.dir + "/model.safetensors");
  Graph graph;
  Gpt2CausalLM model = gpt2_lm_head_model(graph, fixture.config, without_labels(fixture));
  EXPECT_EQ(gpt2_architecture(model.params), "GPT2LMHeadModel");
  model.params.load(weights, "fixture");
  const Tensor reference = logits_of(model.params, model.logits, fixture);

  // A bare GPT2Model checkpoint as older transformers saved it: the causal-mask buffers of each
  // attention, and the tied head stored beside wte.
  std::map<std::string, Tensor> legacy;
  for (const auto& [name, tensor] : weights) legacy[name.substr(12)] = tensor;  // "transformer."
  for (int layer : {0, 1}) {
    legacy["h." + std::to_string(layer) + ".attn.bias"] = Tensor(DType::boolean, {1, 1, 24, 24});
    legacy["h." + std::to_string(layer) + ".attn.masked_bias"] = Tensor::scalar(DType::f32, -1e4);
  }
  legacy["lm_head.weight"] = weights.at("transformer.wte.weight");
  Graph graph2;
  Gpt2CausalLM fresh = gpt2_lm_head_model(graph2, fixture.config, without_labels(fixture));
  LoadReport report = fresh.params.load(gpt2_adapt_state_dict(legacy, fresh.params), "legacy");
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.unexpected.empty());
  EXPECT_EQ(logits_of(fresh.params, fresh.logits, fixture).to_doubles(), reference.to_doubles());

  // The other way: the LM's checkpoint into a bare GPT2Model drops the prefix.
  Graph graph3;
  ParameterSet bare(graph3);
  DropoutContext no_dropout;
  gpt2_model(fixture.config, gpt2_inputs(graph3, fixture.options), bare, no_dropout, "");
  EXPECT_EQ(gpt2_architecture(bare), "GPT2Model");
  report = bare.load(gpt2_adapt_state_dict(weights, bare), "lm");
  EXPECT_EQ(bare.parameters().front().name, "wte.weight");

  // A classifier from the LM: only its score is new.
  Gpt2Config padded = fixture.config;
  padded.pad_token_id = padded.eos_token_id;  // as run_glue.py sets it for GPT-2
  Graph graph4;
  Gpt2SequenceClassifier classifier =
      gpt2_for_sequence_classification(graph4, padded, without_labels(fixture));
  report = gpt2_load_weights(classifier.params, fixture.dir, /*strict=*/false);
  EXPECT_EQ(report.missing, std::vector<std::string>{"score.weight"});
  EXPECT_TRUE(report.unexpected.empty());
}

TEST(Gpt2Pretrained, AShardedCheckpointLoadsAsItsSingleFile) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("lm");
  const std::string sharded = std::string(KILN_SOURCE_DIR) + "/tests/data/gpt2/lm_sharded";
  ASSERT_FALSE(fs::exists(sharded + "/model.safetensors"));
  Graph graph;
  Gpt2CausalLM model = gpt2_lm_head_model(graph, fixture.config, without_labels(fixture));
  gpt2_load_weights(model.params, sharded);
  std::map<std::string, Tensor> single = read_all(fixture.dir + "/model.safetensors");
  for (const Parameter& param : model.params.parameters()) {
    EXPECT_EQ(param.tensor.to_doubles(), single.at(param.name).to_doubles()) << param.name;
  }

  // An index that puts a tensor in a shard without it names both.
  fs::path broken = testing::scratch_folder() / "broken";
  fs::create_directories(broken);
  for (const auto& entry : fs::directory_iterator(sharded)) {
    fs::copy_file(entry.path(), broken / entry.path().filename());
  }
  std::string index = testing::read_text(broken / "model.safetensors.index.json");
  const std::string entry = "\"transformer.wte.weight\": \"model-00001-of-00003.safetensors\"";
  const size_t at = index.find(entry);
  ASSERT_NE(at, std::string::npos) << index;
  index.replace(at, entry.size(),
                "\"transformer.wte.weight\": \"model-00003-of-00003.safetensors\"");
  std::ofstream(broken / "model.safetensors.index.json") << index;
  Graph graph2;
  Gpt2CausalLM other = gpt2_lm_head_model(graph2, fixture.config, without_labels(fixture));
  std::string message = testing::error_of([&] { gpt2_load_weights(other.params, broken); });
  EXPECT_NE(message.find("model-00003-of-00003.safetensors] has no tensor "
                         "\"transformer.wte.weight\""),
            std::string::npos)
      << message;
}

TEST(Gpt2Pretrained, AFolderWithPytorchWeightsOnlyGetsTheConversionCommand) {
  fs::path folder = testing::scratch_folder() / "pickled";
  fs::create_directories(folder);
  fs::copy_file(std::string(KILN_SOURCE_DIR) + "/tests/data/gpt2/lm/config.json",
                folder / "config.json");
  std::ofstream(folder / "pytorch_model.bin") << "not a safetensors file";
  Gpt2Fixture fixture = testing::load_gpt2_fixture("lm");
  Graph graph;
  Gpt2CausalLM model = gpt2_lm_head_model(graph, fixture.config, without_labels(fixture));
  std::string message = testing::error_of([&] { gpt2_load_weights(model.params, folder); });
  EXPECT_NE(message.find("holds PyTorch weights (pytorch_model.bin) but no model.safetensors"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("save_pretrained(d)\" '" + folder.string() + "'"), std::string::npos)
      << message;
}

TEST(Gpt2Pretrained, SavedModelsLoadBackWithTheSameLogits) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("lm");
  Gpt2Config config = fixture.config;
  config.initializer_range = 0.2;
  for (bool tied : {true, false}) {
    SCOPED_TRACE(tied ? "tied" : "untied");
    config.tie_word_embeddings = tied;
    fs::path folder = testing::scratch_folder() / (tied ? "tied" : "untied");
    Graph graph;
    Gpt2CausalLM model = gpt2_lm_head_model(graph, config, without_labels(fixture));
    EXPECT_EQ(model.params.contains("lm_head.weight"), !tied);
    model.params.initialize(2024);
    const Tensor logits = logits_of(model.params, model.logits, fixture);
    gpt2_save_pretrained(folder.string(), config, model.params);
    EXPECT_EQ(read_all((folder / "model.safetensors").string()).contains("lm_head.weight"), !tied);

    Gpt2Config reread = gpt2_config_read((folder / "config.json").string());
    EXPECT_EQ(reread.architectures, std::vector<std::string>{"GPT2LMHeadModel"});
    EXPECT_EQ(reread.tie_word_embeddings, tied);
    Graph graph2;
    Gpt2CausalLM loaded = gpt2_lm_head_model(graph2, reread, without_labels(fixture));
    gpt2_load_weights(loaded.params, folder.string());
    EXPECT_EQ(logits_of(loaded.params, loaded.logits, fixture).to_doubles(), logits.to_doubles());
  }
}

}  // namespace
}  // namespace kiln
