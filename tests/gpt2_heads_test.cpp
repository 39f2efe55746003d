// Golden tests against transformers for GPT-2 (fixtures by
// tests/fixtures_gen/make_gpt2_fixtures.py, right-padded batches): GPT2LMHeadModel,
// GPT2ForSequenceClassification (single-label and regression), GPT2ForTokenClassification and
// GPT2ForQuestionAnswering reproduce the logits, the loss and every parameter gradient on the
// reference backend, with golden_test_util.h's tolerance (1e-5 of each tensor's scale). The
// parameter names and their order are HF's.
#include <gtest/gtest.h>

#include "golden_test_util.h"
#include "gpt2_test_util.h"
#include "kiln/models/gpt2_heads.h"
#include "kiln/models/gpt2_pretrained.h"

namespace kiln {
namespace {

using testing::Gpt2Fixture;

TEST(Gpt2Heads, CausalLmMatchesTransformers) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("lm");
  Graph graph;
  Gpt2CausalLM model = gpt2_lm_head_model(graph, fixture.config, fixture.options);
  EXPECT_FALSE(model.params.contains("lm_head.weight"));  // tied to transformer.wte.weight
  testing::expect_matches_transformers(fixture, model.params, gpt2_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(Gpt2Heads, SequenceClassificationMatchesTransformers) {
  for (const char* name : {"classifier", "regression"}) {
    SCOPED_TRACE(name);
    Gpt2Fixture fixture = testing::load_gpt2_fixture(name);
    Graph graph;
    Gpt2SequenceClassifier model =
        gpt2_for_sequence_classification(graph, fixture.config, fixture.options);
    EXPECT_EQ(model.problem_type, std::string(name) == "regression"
                                      ? "regression"
                                      : "single_label_classification");
    testing::expect_matches_transformers(fixture, model.params, gpt2_load_weights, model.loss,
                                       {model.logits}, {"logits"});
  }
}

// The training graph: one dropout site for the embeddings and three per block (attention
// probabilities, attention output, MLP output), as GPT2Model has them; at rate 0 it computes
// the evaluation graph's loss and gradients (the attention's softmax is spelled out there).
TEST(Gpt2Heads, TrainingGraphHasGpt2sDropoutSites) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("lm");
  fixture.config.resid_pdrop = fixture.config.embd_pdrop = fixture.config.attn_pdrop = 0.0;
  fixture.options.training = true;
  Graph graph;
  Gpt2CausalLM model = gpt2_lm_head_model(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.dropout.sites(), 1 + 3 * static_cast<uint32_t>(fixture.config.n_layer));
  std::map<std::string, Tensor> feeds = fixture.feeds();
  feeds["dropout_seed"] = Tensor::scalar(DType::i64, 1);
  feeds["dropout_offset"] = Tensor(DType::i64, {fixture.options.batch_size});
  gpt2_load_weights(model.params, fixture.dir);
  testing::expect_outputs_and_gradients_match(fixture.expected, model.params, model.loss,
                                              {model.logits}, {"logits"}, feeds, {}, 0,
                                              evaluate_reference);
}

// Without pad_token_id transformers pools the last token, and refuses batches of several rows.
TEST(Gpt2Heads, WithoutAPadTokenTheLastTokenIsPooledForOneRowOnly) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("classifier");
  fixture.config.pad_token_id.reset();
  BertBuildOptions options = fixture.options;
  options.with_labels = false;
  Graph graph;
  EXPECT_NE(testing::error_of([&] {
              gpt2_for_sequence_classification(graph, fixture.config, options);
            }).find("Cannot handle batch sizes > 1 if no padding token is defined"),
            std::string::npos);
  options.batch_size = 1;  // the fixture's first row has no padding: its last token is pooled
  Graph single;
  Gpt2SequenceClassifier model = gpt2_for_sequence_classification(single, fixture.config, options);
  gpt2_load_weights(model.params, fixture.dir);
  const Tensor& ids = fixture.expected.at("input_ids");
  const int64_t seq = ids.shape()[1];
  std::vector<double> first_row;
  for (int64_t i = 0; i < seq; ++i) first_row.push_back(ids.get(i));
  Tensor row_ids = Tensor::from_doubles(ids.dtype(), {1, seq}, first_row);
  Tensor row_mask = Tensor::from_doubles(ids.dtype(), {1, seq}, std::vector<double>(seq, 1.0));
  Tensor logits = evaluate_reference(
      single, {model.logits},
      model.params.arguments({{"input_ids", row_ids}, {"attention_mask", row_mask}}))[0];
  const Tensor& expected = fixture.expected.at("logits");
  const int64_t classes = logits.numel();
  std::vector<double> expected_row;
  for (int64_t c = 0; c < classes; ++c) expected_row.push_back(expected.get(c));
  EXPECT_EQ(testing::compare_tensors(logits, Tensor::from_doubles(DType::f32, {1, classes},
                                                                  expected_row),
                                     0.0, 1e-5 * testing::max_abs(expected)),
            "");
}

TEST(Gpt2Heads, TokenClassificationMatchesTransformers) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("token");
  Graph graph;
  Gpt2TokenClassifier model =
      gpt2_for_token_classification(graph, fixture.config, fixture.options);
  testing::expect_matches_transformers(fixture, model.params, gpt2_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(Gpt2Heads, QuestionAnsweringMatchesTransformers) {
  Gpt2Fixture fixture = testing::load_gpt2_fixture("qa");
  Graph graph;
  Gpt2QuestionAnswering model =
      gpt2_for_question_answering(graph, fixture.config, fixture.options);
  testing::expect_matches_transformers(fixture, model.params, gpt2_load_weights, model.loss,
                                       {model.start_logits, model.end_logits},
                                       {"start_logits", "end_logits"});
}

}  // namespace
}  // namespace kiln
