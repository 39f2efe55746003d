// Golden tests against transformers for BertForQuestionAnswering, BertForMaskedLM and
// BertForTokenClassification (fixtures by tests/fixtures_gen/make_bert_head_fixtures.py):
// logits, loss and every parameter gradient on the reference backend, with the tolerance of bert_model_test (1e-5 of each tensor's scale; a
// bias is measured against its module's weight gradient too, since some biases have an exact
// gradient of zero: the key biases, and in the QA head qa_outputs.bias and the last LayerNorm's
// bias, which shift every position's logit alike). One documented difference: torch zeroes the
// gradient of the embedding's padding row, and the IR has no stop-gradient, so for the QA head
// (whose loss sees the logits of padding positions) that row is compared apart: zero in torch,
// whatever the padding positions contribute in Kiln (see nn/layers.h).
// Also: the heads' parameter names and order are HF's, and checkpoints load across heads.
#include <gtest/gtest.h>

#include "golden_test_util.h"
#include "kiln/io/mlm_collate.h"
#include "kiln/models/bert_heads.h"
#include "kiln/models/bert_pretrained.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::BertFixture;

TEST(BertHeads, QuestionAnsweringMatchesTransformers) {
  BertFixture fixture = testing::load_bert_fixture("qa");
  Graph graph;
  BertQuestionAnswering model = bert_for_question_answering(graph, fixture.config, fixture.options);
  testing::expect_matches_transformers(
      fixture, model.params, bert_load_weights, model.loss, {model.start_logits, model.end_logits},
      {"start_logits", "end_logits"}, "bert.embeddings.word_embeddings.weight");
}

TEST(BertHeads, MaskedLmMatchesTransformers) {
  BertFixture fixture = testing::load_bert_fixture("mlm");
  Graph graph;
  BertMaskedLM model = bert_for_masked_lm(graph, fixture.config, fixture.options);
  EXPECT_FALSE(model.params.contains("cls.predictions.decoder.weight"));
  testing::expect_matches_transformers(fixture, model.params, bert_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(BertHeads, TokenClassificationMatchesTransformers) {
  BertFixture fixture = testing::load_bert_fixture("token");
  Graph graph;
  BertTokenClassification model =
      bert_for_token_classification(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.logits.shape(), (Shape{fixture.options.batch_size, fixture.options.seq_len, 5}));
  EXPECT_EQ(bert_architecture(model.params), "BertForTokenClassification");
  testing::expect_matches_transformers(fixture, model.params, bert_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

// The head that computes logits only at the labelled positions (what the Trainer runs): the
// same loss and gradients as transformers' head over every position, and the same logits there.
TEST(BertHeads, MaskedLmPredictingOnlyLabelledPositionsMatchesTransformers) {
  BertFixture fixture = testing::load_bert_fixture("mlm");
  const Tensor& labels = fixture.expected.at("labels");
  int64_t labelled = 0;
  for (int64_t i = 0; i < labels.numel(); ++i) labelled += labels.get(i) != -100;
  ASSERT_GT(labelled, 0);
  fixture.options.mlm_predictions = labelled + 3;  // with padding
  MlmPredictions predictions =
      compact_mlm_labels(labels, fixture.options.mlm_predictions, "fixture");
  Graph graph;
  BertMaskedLM model = bert_for_masked_lm(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.logits.shape(),
            (Shape{labelled + 3, fixture.config.vocab_size}));
  testing::expect_matches_transformers(
      fixture, model.params, bert_load_weights, model.loss, {}, {}, "",
      {{"masked_positions", predictions.positions}, {"masked_labels", predictions.labels}});
}

TEST(BertHeads, AMaskedLmCheckpointLoadsIntoTheOtherHeads) {
  BertFixture fixture = testing::load_bert_fixture("mlm");
  fixture.options.with_labels = false;
  Graph qa_graph, classifier_graph;
  BertQuestionAnswering qa = bert_for_question_answering(qa_graph, fixture.config, fixture.options);
  LoadReport report = bert_load_weights(qa.params, fixture.dir, /*strict=*/false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"qa_outputs.bias", "qa_outputs.weight"}));
  EXPECT_EQ(report.unexpected.size(), 5u);  // cls.predictions.{bias, transform.*}
  EXPECT_EQ(bert_architecture(qa.params), "BertForQuestionAnswering");
  BertClassifier classifier =
      bert_for_sequence_classification(classifier_graph, fixture.config, fixture.options);
  report = bert_load_weights(classifier.params, fixture.dir, /*strict=*/false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"bert.pooler.dense.bias",
                                                      "bert.pooler.dense.weight",
                                                      "classifier.bias", "classifier.weight"}));
}

TEST(BertHeads, LegacyTiedDecoderTensorsAreAbsorbed) {
  BertFixture fixture = testing::load_bert_fixture("mlm");
  Graph graph;
  BertMaskedLM model = bert_for_masked_lm(graph, fixture.config, fixture.options);
  SafetensorsFile file(fixture.dir + "/model.safetensors");
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : file.names()) tensors.emplace(name, file.to_tensor(name));
  // An older checkpoint: the bias only under the decoder's name, and the tied weight stored too.
  tensors["cls.predictions.decoder.bias"] = tensors.at("cls.predictions.bias");
  tensors.erase("cls.predictions.bias");
  tensors["cls.predictions.decoder.weight"] = tensors.at("bert.embeddings.word_embeddings.weight");
  LoadReport report = model.params.load(bert_adapt_state_dict(tensors, model.params), "legacy");
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.unexpected.empty());
  EXPECT_EQ(bert_architecture(model.params), "BertForMaskedLM");
}

TEST(BertHeads, QuestionAnsweringNeedsTwoLabels) {
  BertFixture fixture = testing::load_bert_fixture("qa");
  fixture.config.set_num_labels(3);
  Graph graph;
  EXPECT_NE(testing::error_of([&] {
              bert_for_question_answering(graph, fixture.config, fixture.options);
            }).find("needs num_labels 2"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
