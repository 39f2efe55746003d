// BERT weights by Hugging Face name: the parameter list equals transformers' state dict, loading
// errors name the tensors, checkpoint names are adapted as transformers does, and a model saved by
// Kiln loads back with the same logits (and, checked by the generator script, in transformers).
#include <gtest/gtest.h>

#include <filesystem>

#include "bert_test_util.h"
#include "support/testing.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/error.h"
#include "kiln/models/bert_pretrained.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::BertFixture;

std::map<std::string, Tensor> read_all(const std::string& path) {
  SafetensorsFile file(path);
  std::map<std::string, Tensor> out;
  for (const std::string& name : file.names()) out[name] = file.to_tensor(name);
  return out;
}

// The message of the Error that `load` throws, or "" when it does not throw.
std::string load_error(ParameterSet& params, const std::map<std::string, Tensor>& tensors) {
  try {
    params.load(tensors, "weights.safetensors");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

Tensor logits_of(const BertClassifier& model, const BertFixture& fixture) {
  return evaluate_reference(model.params.graph(), {model.logits},
                            model.params.arguments(fixture.feeds()))[0];
}

TEST(BertWeights, NamesOrderAndDecayMatchTransformers) {
  for (const std::string& name : testing::kBertFixtures) {
    BertFixture fixture = testing::load_bert_fixture(name);
    Graph graph;
    BertClassifier model = bert_for_sequence_classification(graph, fixture.config, fixture.options);
    EXPECT_EQ(model.params.names(), fixture.parameter_order) << name;
    SafetensorsFile weights(fixture.dir + "/model.safetensors");
    EXPECT_EQ(model.params.size(), weights.names().size()) << name;
    for (const Parameter& param : model.params.parameters()) {
      EXPECT_TRUE(weights.contains(param.name)) << param.name;
      EXPECT_EQ(param.value.shape(), weights.get(param.name).shape) << param.name;
      // HF Trainer: no decay for biases and LayerNorm parameters.
      bool no_decay =
          param.name.ends_with(".bias") || param.name.find("LayerNorm") != std::string::npos;
      EXPECT_EQ(param.decay, !no_decay) << param.name;
    }
  }
  BertFixture tiny = testing::load_bert_fixture("tiny");
  Graph graph;
  BertClassifier model = bert_for_sequence_classification(graph, tiny.config, tiny.options);
  EXPECT_EQ(model.params.size(), 5u + 16u * 2u + 4u);  // embeddings, 2 layers, pooler, classifier
  EXPECT_EQ(model.params.parameters()[5].name, "bert.encoder.layer.0.attention.self.query.weight");
}

TEST(BertWeights, LoadErrorsNameTheTensors) {
  BertFixture fixture = testing::load_bert_fixture("tiny");
  std::map<std::string, Tensor> weights = read_all(fixture.dir + "/model.safetensors");
  Graph graph;
  BertClassifier model = bert_for_sequence_classification(graph, fixture.config, fixture.options);

  auto missing = weights;
  missing.erase("classifier.bias");
  std::string message = load_error(model.params, missing);
  EXPECT_NE(message.find("[weights.safetensors]"), std::string::npos) << message;
  EXPECT_NE(message.find("1 missing [classifier.bias]"), std::string::npos) << message;

  auto both = missing;
  both["bert.pooler.extra.weight"] = Tensor(DType::f32, {2});
  message = load_error(model.params, both);
  EXPECT_NE(message.find("1 missing [classifier.bias]"), std::string::npos) << message;
  EXPECT_NE(message.find("1 unexpected [bert.pooler.extra.weight]"), std::string::npos) << message;

  auto misshaped = weights;
  misshaped["classifier.weight"] = Tensor(DType::f32, {2, 32});
  message = load_error(model.params, misshaped);
  EXPECT_NE(
      message.find("tensor 'classifier.weight': shape (2,32) in the weights, (3,32) in the model"),
      std::string::npos)
      << message;
  // A failed load takes nothing.
  EXPECT_EQ(model.params.get("bert.pooler.dense.weight").tensor.nbytes(), 0u);

  auto integer = weights;
  integer["classifier.bias"] = Tensor(DType::i64, {3});
  message = load_error(model.params, integer);
  EXPECT_NE(message.find("tensor 'classifier.bias': dtype i64 is not floating"), std::string::npos)
      << message;

  // Not strict: reported, loaded where possible, the rest initialised afterwards.
  LoadReport report = model.params.load(both, "weights.safetensors", /*strict=*/false);
  EXPECT_EQ(report.missing, std::vector<std::string>{"classifier.bias"});
  EXPECT_EQ(report.unexpected, std::vector<std::string>{"bert.pooler.extra.weight"});
  EXPECT_EQ(model.params.get("classifier.bias").tensor.nbytes(), 0u);
  model.params.initialize(3);
  EXPECT_EQ(model.params.get("classifier.bias").tensor.to_doubles(), std::vector<double>(3, 0.0));
  EXPECT_EQ(model.params.get("classifier.weight").tensor.to_doubles(),
            weights.at("classifier.weight").to_doubles());
}

TEST(BertWeights, CheckpointNamesAreAdaptedAsTransformersDoes) {
  BertFixture fixture = testing::load_bert_fixture("tiny");
  std::map<std::string, Tensor> weights = read_all(fixture.dir + "/model.safetensors");
  Graph graph;
  BertClassifier model = bert_for_sequence_classification(graph, fixture.config, fixture.options);
  Tensor reference = [&] {
    model.params.load(weights, "fixture");
    return logits_of(model, fixture);
  }();

  // A bare BertModel checkpoint with legacy LayerNorm names and a position_ids buffer.
  std::map<std::string, Tensor> legacy;
  for (const auto& [name, tensor] : weights) {
    if (name.starts_with("classifier.")) continue;
    std::string key = name.substr(5);  // without "bert."
    if (key.ends_with("LayerNorm.weight")) key.replace(key.size() - 6, 6, "gamma");
    if (key.ends_with("LayerNorm.bias")) key.replace(key.size() - 4, 4, "beta");
    legacy[key] = tensor;
  }
  legacy["embeddings.position_ids"] = Tensor(DType::i64, {1, 64});
  std::map<std::string, Tensor> adapted = bert_adapt_state_dict(legacy, model.params);
  EXPECT_TRUE(adapted.contains("bert.embeddings.LayerNorm.weight"));
  EXPECT_TRUE(adapted.contains("bert.encoder.layer.1.output.LayerNorm.bias"));
  EXPECT_FALSE(adapted.contains("bert.embeddings.position_ids"));

  Graph graph2;
  BertClassifier fresh = bert_for_sequence_classification(graph2, fixture.config, fixture.options);
  LoadReport report = fresh.params.load(adapted, "legacy", /*strict=*/false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"classifier.bias", "classifier.weight"}));
  EXPECT_TRUE(report.unexpected.empty());
  fresh.params.load({{"classifier.weight", weights.at("classifier.weight")},
                     {"classifier.bias", weights.at("classifier.bias")}},
                    "head", /*strict=*/false);
  EXPECT_EQ(logits_of(fresh, fixture).to_doubles(), reference.to_doubles());

  // The other way: a classification checkpoint into a bare BertModel drops the prefix.
  Graph graph3;
  ParameterSet bare(graph3);
  DropoutContext no_dropout;
  bert_model(fixture.config, bert_inputs(graph3, fixture.options), bare, no_dropout, "");
  report = bare.load(bert_adapt_state_dict(weights, bare), "classifier", /*strict=*/false);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_EQ(report.unexpected, (std::vector<std::string>{"classifier.bias", "classifier.weight"}));
  EXPECT_EQ(bare.parameters().front().name, "embeddings.word_embeddings.weight");
}

// Saves a Kiln-initialised model and reloads it (transformers_export_test loads such folders in
// transformers).
TEST(BertWeights, SavedModelLoadsBackWithTheSameLogits) {
  BertFixture fixture = testing::load_bert_fixture("tiny");
  fs::path folder = testing::scratch_folder() / "model";
  BertConfig config = fixture.config;
  config.initializer_range = 0.2;  // a visible signal through the tanh pooler

  Graph graph;
  BertClassifier model = bert_for_sequence_classification(graph, config, fixture.options);
  model.params.initialize(2024);
  Tensor logits = logits_of(model, fixture);
  bert_save_pretrained(folder.string(), config, model.params);

  BertConfig reread = bert_config_read((folder / "config.json").string());
  EXPECT_EQ(reread.architectures, std::vector<std::string>{"BertForSequenceClassification"});
  EXPECT_EQ(reread.num_labels(), 3);
  EXPECT_EQ(reread.initializer_range, 0.2);
  Graph graph2;
  BertClassifier loaded = bert_for_sequence_classification(graph2, reread, fixture.options);
  bert_load_weights(loaded.params, folder.string());
  EXPECT_EQ(logits_of(loaded, fixture).to_doubles(), logits.to_doubles());
}

}  // namespace
}  // namespace kiln
