// Golden tests against transformers for DistilBERT's heads (fixtures by
// tests/fixtures_gen/make_distilbert_fixtures.py): DistilBertForSequenceClassification (single-
// and multi-label), DistilBertForQuestionAnswering, DistilBertForTokenClassification and
// DistilBertForMaskedLM (tied projector), each on a right-padded batch with its attention mask:
// logits, loss and every parameter gradient on the reference backend to 1e-5 of each tensor's
// scale (golden_test_util.h; the QA head's padding row of the word embeddings compared apart, as
// in bert_heads_test). Also: HF's parameter names and order, and checkpoints across heads (bare
// DistilBertModel, another head's, a stored tied projector).
#include <gtest/gtest.h>

#include "distilbert_test_util.h"
#include "golden_test_util.h"
#include "kiln/io/mlm_collate.h"
#include "kiln/io/safetensors.h"
#include "kiln/models/distilbert_heads.h"
#include "kiln/models/distilbert_pretrained.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::DistilBertFixture;

DistilBertFixture load_fixture(const std::string& name) {
  return testing::load_distilbert_fixture(name);
}


std::map<std::string, Tensor> checkpoint_tensors(const DistilBertFixture& fixture) {
  SafetensorsFile file(fixture.dir + "/model.safetensors");
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : file.names()) tensors.emplace(name, file.to_tensor(name));
  return tensors;
}

TEST(DistilBertHeads, SequenceClassificationMatchesTransformers) {
  for (const char* name : {"classifier", "multi_label"}) {
    SCOPED_TRACE(name);
    DistilBertFixture fixture = load_fixture(name);
    Graph graph;
    DistilBertClassifier model =
        distilbert_for_sequence_classification(graph, fixture.config, fixture.options);
    EXPECT_EQ(model.problem_type, std::string(name) == "classifier"
                                      ? "single_label_classification"
                                      : "multi_label_classification");
    testing::expect_matches_transformers(fixture, model.params, distilbert_load_weights, model.loss,
                                         {model.logits}, {"logits"});
  }
}

TEST(DistilBertHeads, QuestionAnsweringMatchesTransformers) {
  DistilBertFixture fixture = load_fixture("qa");
  Graph graph;
  DistilBertQuestionAnswering model =
      distilbert_for_question_answering(graph, fixture.config, fixture.options);
  testing::expect_matches_transformers(fixture, model.params, distilbert_load_weights, model.loss,
                                       {model.start_logits, model.end_logits},
                                       {"start_logits", "end_logits"},
                                       "distilbert.embeddings.word_embeddings.weight");
}

TEST(DistilBertHeads, TokenClassificationMatchesTransformers) {
  DistilBertFixture fixture = load_fixture("token");
  Graph graph;
  DistilBertTokenClassifier model =
      distilbert_for_token_classification(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.logits.shape(), (Shape{fixture.options.batch_size, fixture.options.seq_len,
                                         fixture.config.num_labels()}));
  testing::expect_matches_transformers(fixture, model.params, distilbert_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(DistilBertHeads, MaskedLmMatchesTransformers) {
  DistilBertFixture fixture = load_fixture("mlm");
  Graph graph;
  DistilBertMaskedLM model = distilbert_for_masked_lm(graph, fixture.config, fixture.options);
  EXPECT_FALSE(model.params.contains("vocab_projector.weight"));
  testing::expect_matches_transformers(fixture, model.params, distilbert_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

// The head that computes logits only at the labelled positions (what the Trainer runs): the
// same loss and gradients as transformers' head over every position.
TEST(DistilBertHeads, MaskedLmPredictingOnlyLabelledPositionsMatchesTransformers) {
  DistilBertFixture fixture = load_fixture("mlm");
  const Tensor& labels = fixture.expected.at("labels");
  int64_t labelled = 0;
  for (int64_t i = 0; i < labels.numel(); ++i) labelled += labels.get(i) != -100;
  ASSERT_GT(labelled, 0);
  fixture.options.mlm_predictions = labelled + 2;  // with padding
  MlmPredictions predictions =
      compact_mlm_labels(labels, fixture.options.mlm_predictions, "fixture");
  Graph graph;
  DistilBertMaskedLM model = distilbert_for_masked_lm(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.logits.shape(), (Shape{labelled + 2, fixture.config.vocab_size}));
  testing::expect_matches_transformers(
      fixture, model.params, distilbert_load_weights, model.loss, {}, {}, "",
      {{"masked_positions", predictions.positions}, {"masked_labels", predictions.labels}});
}

TEST(DistilBertHeads, UntiedProjectorHasItsOwnWeight) {
  DistilBertFixture fixture = load_fixture("mlm");
  fixture.config.tie_word_embeddings = false;
  Graph graph;
  DistilBertMaskedLM model = distilbert_for_masked_lm(graph, fixture.config, fixture.options);
  const std::vector<std::string> names = model.params.names();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[names.size() - 2], "vocab_projector.weight");
  EXPECT_EQ(names.back(), "vocab_projector.bias");
  EXPECT_EQ(model.params.get("vocab_projector.weight").value.shape(),
            (Shape{fixture.config.vocab_size, fixture.config.dim}));
}

// A bare DistilBertModel checkpoint (no "distilbert." prefix, no head) loads into a head, whose
// head parameters are reported missing; and a head's checkpoint loads into a bare model.
TEST(DistilBertHeads, BareModelCheckpointsLoadAcrossThePrefix) {
  DistilBertFixture fixture = load_fixture("mlm");
  fixture.options.with_labels = false;
  std::map<std::string, Tensor> bare;
  for (auto& [name, tensor] : checkpoint_tensors(fixture)) {
    if (name.starts_with("distilbert.")) bare.emplace(name.substr(11), tensor);
  }
  bare.emplace("embeddings.position_ids", Tensor(DType::i64, {1, 40}));  // an old buffer

  Graph graph;
  DistilBertClassifier classifier =
      distilbert_for_sequence_classification(graph, fixture.config, fixture.options);
  LoadReport report = classifier.params.load(
      distilbert_adapt_state_dict(bare, classifier.params), "bare", /*strict=*/false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"classifier.bias", "classifier.weight",
                                                      "pre_classifier.bias",
                                                      "pre_classifier.weight"}));
  EXPECT_TRUE(report.unexpected.empty());
  EXPECT_EQ(testing::compare_tensors(
                classifier.params.get("distilbert.transformer.layer.1.ffn.lin2.weight").tensor,
                bare.at("transformer.layer.1.ffn.lin2.weight"), 0.0, 0.0),
            "");

  Graph bare_graph;
  ParameterSet bare_params(bare_graph);
  DropoutContext no_dropout;
  distilbert_model(fixture.config, distilbert_inputs(bare_graph, fixture.options), bare_params,
                   no_dropout, /*prefix=*/"");
  EXPECT_EQ(distilbert_architecture(bare_params), "DistilBertModel");
  report = distilbert_load_weights(bare_params, fixture.dir, /*strict=*/false);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_EQ(report.unexpected, (std::vector<std::string>{"vocab_layer_norm.bias",
                                                         "vocab_layer_norm.weight",
                                                         "vocab_projector.bias",
                                                         "vocab_transform.bias",
                                                         "vocab_transform.weight"}));
}

TEST(DistilBertHeads, AMaskedLmCheckpointLoadsIntoTheOtherHeads) {
  DistilBertFixture fixture = load_fixture("mlm");
  fixture.options.with_labels = false;
  fixture.config.set_num_labels(2);
  Graph qa_graph, token_graph;
  DistilBertQuestionAnswering qa =
      distilbert_for_question_answering(qa_graph, fixture.config, fixture.options);
  LoadReport report = distilbert_load_weights(qa.params, fixture.dir, /*strict=*/false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"qa_outputs.bias", "qa_outputs.weight"}));
  EXPECT_EQ(report.unexpected.size(), 5u);  // vocab_transform, vocab_layer_norm, projector bias
  EXPECT_EQ(distilbert_architecture(qa.params), "DistilBertForQuestionAnswering");
  DistilBertTokenClassifier token =
      distilbert_for_token_classification(token_graph, fixture.config, fixture.options);
  report = distilbert_load_weights(token.params, fixture.dir, /*strict=*/false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"classifier.bias", "classifier.weight"}));
  EXPECT_EQ(distilbert_architecture(token.params), "DistilBertForTokenClassification");
}

// Checkpoints written by older transformers store the tied projector's weight too.
TEST(DistilBertHeads, AStoredTiedProjectorWeightIsAbsorbed) {
  DistilBertFixture fixture = load_fixture("mlm");
  Graph graph;
  DistilBertMaskedLM model = distilbert_for_masked_lm(graph, fixture.config, fixture.options);
  std::map<std::string, Tensor> tensors = checkpoint_tensors(fixture);
  tensors["vocab_projector.weight"] = tensors.at("distilbert.embeddings.word_embeddings.weight");
  LoadReport report =
      model.params.load(distilbert_adapt_state_dict(tensors, model.params), "legacy");
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.unexpected.empty());
  EXPECT_EQ(distilbert_architecture(model.params), "DistilBertForMaskedLM");
}

TEST(DistilBertHeads, QuestionAnsweringNeedsTwoLabels) {
  DistilBertFixture fixture = load_fixture("qa");
  fixture.config.set_num_labels(3);
  Graph graph;
  EXPECT_NE(testing::error_of([&] {
              distilbert_for_question_answering(graph, fixture.config, fixture.options);
            }).find("needs num_labels 2"),
            std::string::npos);
}

TEST(DistilBertHeads, SequencesLongerThanThePositionTableAreRefused) {
  DistilBertFixture fixture = load_fixture("classifier");
  fixture.options.seq_len = fixture.config.max_position_embeddings + 1;
  Graph graph;
  EXPECT_NE(testing::error_of([&] {
              distilbert_for_sequence_classification(graph, fixture.config, fixture.options);
            }).find("exceeds max_position_embeddings 40"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
