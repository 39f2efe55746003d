// Golden tests against transformers for ELECTRA (fixtures by
// tests/fixtures_gen/make_encoder_family_fixtures.py): for ElectraForSequenceClassification,
// ...ForQuestionAnswering (embedding_size = hidden_size: no embeddings_project),
// ...ForTokenClassification, ...ForMaskedLM (the generator) and ...ForPreTraining (the
// discriminator, whose padding labels its loss ignores), the outputs, loss and every parameter
// gradient on a right-padded batch, on the reference backend to 1e-5 of each tensor's scale (see
// testing::expect_matches_transformers; in the QA head, whose loss sees the logits of padding
// positions, the word embeddings' padding row is compared apart). Also: the config's
// embedding_size and defaults, checkpoints loading across heads, and the architecture names.
#include "kiln/models/electra_heads.h"

#include <gtest/gtest.h>

#include "golden_test_util.h"
#include "kiln/io/mlm_collate.h"
#include "kiln/models/electra.h"
#include "kiln/models/electra_pretrained.h"
#include "support/testing.h"

namespace kiln {
namespace {

using ElectraFixture = testing::ModelFixture<ElectraConfig>;

ElectraFixture load(const std::string& name) {
  return testing::load_model_fixture(std::string(KILN_SOURCE_DIR) + "/tests/data/" + name,
                                     electra_config_read);
}

TEST(ElectraHeads, SequenceClassificationMatchesTransformers) {
  ElectraFixture fixture = load("electra/classifier");
  Graph graph;
  BertClassifier model =
      electra_for_sequence_classification(graph, fixture.config, fixture.options);
  EXPECT_TRUE(model.params.contains("electra.embeddings_project.weight"));
  EXPECT_EQ(electra_architecture(model.params), "ElectraForSequenceClassification");
  testing::expect_matches_transformers(fixture, model.params, electra_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(ElectraHeads, QuestionAnsweringMatchesTransformers) {
  ElectraFixture fixture = load("electra/qa");
  Graph graph;
  BertQuestionAnswering model =
      electra_for_question_answering(graph, fixture.config, fixture.options);
  EXPECT_FALSE(model.params.contains("electra.embeddings_project.weight"));
  EXPECT_EQ(electra_architecture(model.params), "ElectraForQuestionAnswering");
  testing::expect_head_matches_transformers(fixture, model.params, electra_load_weights, model.loss,
                                            {model.start_logits, model.end_logits},
                                            {"start_logits", "end_logits"},
                                            {"electra.embeddings.word_embeddings.weight"});
}

TEST(ElectraHeads, TokenClassificationMatchesTransformers) {
  ElectraFixture fixture = load("electra/token");
  Graph graph;
  BertTokenClassification model =
      electra_for_token_classification(graph, fixture.config, fixture.options);
  EXPECT_EQ(electra_architecture(model.params), "ElectraForTokenClassification");
  testing::expect_matches_transformers(fixture, model.params, electra_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(ElectraHeads, GeneratorMaskedLmMatchesTransformers) {
  ElectraFixture fixture = load("electra/mlm");
  Graph graph;
  BertMaskedLM model = electra_for_masked_lm(graph, fixture.config, fixture.options);
  EXPECT_FALSE(model.params.contains("generator_lm_head.weight"));
  EXPECT_EQ(electra_architecture(model.params), "ElectraForMaskedLM");
  testing::expect_matches_transformers(fixture, model.params, electra_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

// What the Trainer runs: logits only at the labelled positions, the same loss and gradients.
TEST(ElectraHeads, GeneratorPredictingOnlyLabelledPositionsMatchesTransformers) {
  ElectraFixture fixture = load("electra/mlm");
  fixture.options.mlm_predictions = 9;  // 8 labelled tokens and a padding slot
  MlmPredictions predictions = compact_mlm_labels(fixture.expected.at("labels"), 9, "fixture");
  Graph graph;
  BertMaskedLM model = electra_for_masked_lm(graph, fixture.config, fixture.options);
  testing::expect_matches_transformers(
      fixture, model.params, electra_load_weights, model.loss, {}, {}, "",
      {{"masked_positions", predictions.positions}, {"masked_labels", predictions.labels}});
}

TEST(ElectraHeads, DiscriminatorMatchesTransformers) {
  ElectraFixture fixture = load("electra/pretraining");
  Graph graph;
  ElectraPreTraining model = electra_for_pre_training(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.logits.shape(), (Shape{fixture.options.batch_size, fixture.options.seq_len}));
  EXPECT_EQ(electra_architecture(model.params), "ElectraForPreTraining");
  testing::expect_matches_transformers(fixture, model.params, electra_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

// A discriminator checkpoint is what ELECTRA fine-tuning starts from: its encoder loads into
// every head, the discriminator's head is left over; the generator's tied weight, when a
// checkpoint stores it, is dropped.
TEST(ElectraHeads, CheckpointsLoadAcrossHeads) {
  ElectraFixture fixture = load("electra/pretraining");
  fixture.options.with_labels = false;
  Graph classifier_graph, bare_graph;
  BertClassifier classifier =
      electra_for_sequence_classification(classifier_graph, fixture.config, fixture.options);
  LoadReport report = electra_load_weights(classifier.params, fixture.dir, /*strict=*/false);
  EXPECT_EQ(report.missing,
            (std::vector<std::string>{"classifier.dense.bias", "classifier.dense.weight",
                                      "classifier.out_proj.bias", "classifier.out_proj.weight"}));
  EXPECT_EQ(report.unexpected.size(), 4u);  // discriminator_predictions.{dense,dense_prediction}.*
  ParameterSet bare(bare_graph);
  DropoutContext no_dropout;
  electra_model(fixture.config, bert_inputs(bare_graph, fixture.options), bare, no_dropout, "");
  EXPECT_EQ(electra_architecture(bare), "ElectraModel");
  report = electra_load_weights(bare, fixture.dir, /*strict=*/false);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_EQ(report.unexpected.size(), 4u);

  ElectraFixture generator = load("electra/mlm");
  Graph mlm_graph;
  BertMaskedLM mlm = electra_for_masked_lm(mlm_graph, generator.config, generator.options);
  SafetensorsFile file(generator.dir + "/model.safetensors");
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : file.names()) tensors.emplace(name, file.to_tensor(name));
  tensors["generator_lm_head.weight"] = tensors.at("electra.embeddings.word_embeddings.weight");
  report = mlm.params.load(electra_adapt_state_dict(tensors, mlm.params), "stored tied weight");
  EXPECT_TRUE(report.unexpected.empty());
}

TEST(ElectraConfig, EmbeddingSizeAndDefaults) {
  ElectraConfig defaults = electra_config_parse(R"({"model_type": "electra"})", "config");
  EXPECT_EQ(defaults.embedding_size, 128);
  EXPECT_EQ(defaults.hidden_size, 256);
  EXPECT_EQ(defaults.num_attention_heads, 4);
  EXPECT_EQ(defaults.intermediate_size, 1024);
  EXPECT_EQ(defaults.pad_token_id, 0);
  ElectraConfig saved = load("electra/mlm").config;  // by transformers
  EXPECT_EQ(saved.embedding_size, 10);
  EXPECT_FALSE(saved.extra.contains("embedding_size"));
  EXPECT_EQ(saved.extra.at("summary_type"), "\"first\"");
  EXPECT_EQ(electra_config_parse(electra_config_to_json(saved), "rewritten"), saved);
  EXPECT_NE(testing::error_of([] {
              electra_config_parse(R"({"model_type": "electra", "embedding_size": 1.5})", "c.json");
            }).find("[c.json] \"embedding_size\" must be an integer, got 1.5"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] {
              electra_config_parse(R"({"model_type": "electra", "embedding_size": 0})", "c.json");
            }).find("\"embedding_size\" must be positive"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] {
              electra_config_parse(R"({"model_type": "bert"})", "c.json");
            }).find("not \"electra\""),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
