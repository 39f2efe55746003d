// Golden tests against transformers for RoBERTa and XLM-RoBERTa (fixtures by
// tests/fixtures_gen/make_encoder_family_fixtures.py): for RobertaForSequenceClassification,
// ...ForQuestionAnswering, ...ForTokenClassification, ...ForMaskedLM and
// XLMRobertaForSequenceClassification (multi-label), the outputs, loss and every parameter
// gradient on a right-padded batch, on the reference backend to 1e-5 of each tensor's scale (see
// testing::expect_matches_transformers; in the QA head, whose loss sees the logits of padding
// positions, the padding rows of the word and position embeddings are compared apart). The batch's
// position ids start at pad_token_id + 1 and stop at padding, so a model with BERT's arange
// positions fails these. Also: the config's RoBERTa defaults and checks, checkpoints loading across
// heads and from a bare RobertaModel, and the architecture names Kiln saves.
#include "kiln/models/roberta_heads.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "golden_test_util.h"
#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/io/mlm_collate.h"
#include "kiln/models/roberta.h"
#include "kiln/models/roberta_pretrained.h"
#include "pjrt_test_util.h"
#include "support/testing.h"

namespace kiln {
namespace {

using RobertaFixture = testing::ModelFixture<RobertaConfig>;

RobertaFixture load(const std::string& name) {
  return testing::load_model_fixture(std::string(KILN_SOURCE_DIR) + "/tests/data/" + name,
                                     roberta_config_read);
}

TEST(RobertaHeads, SequenceClassificationMatchesTransformers) {
  RobertaFixture fixture = load("roberta/classifier");
  Graph graph;
  BertClassifier model =
      roberta_for_sequence_classification(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.problem_type, "single_label_classification");
  testing::expect_matches_transformers(fixture, model.params, roberta_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(RobertaHeads, XlmRobertaMultiLabelClassificationMatchesTransformers) {
  RobertaFixture fixture = load("xlm_roberta/classifier");
  EXPECT_EQ(fixture.config.model_type, "xlm-roberta");
  // transformers 5 registers XLM-RoBERTa's head before its encoder (4.x, and RoBERTa, after it);
  // Kiln keeps RoBERTa's order, which only decides the parameters' initialisation streams.
  std::vector<std::string>& order = fixture.parameter_order;
  std::stable_partition(order.begin(), order.end(),
                        [](const std::string& name) { return name.starts_with("roberta."); });
  Graph graph;
  BertClassifier model =
      roberta_for_sequence_classification(graph, fixture.config, fixture.options);
  EXPECT_EQ(model.problem_type, "multi_label_classification");
  EXPECT_EQ(roberta_architecture(model.params, fixture.config.model_type),
            "XLMRobertaForSequenceClassification");
  testing::expect_matches_transformers(fixture, model.params, roberta_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(RobertaHeads, QuestionAnsweringMatchesTransformers) {
  RobertaFixture fixture = load("roberta/qa");
  Graph graph;
  BertQuestionAnswering model =
      roberta_for_question_answering(graph, fixture.config, fixture.options);
  testing::expect_head_matches_transformers(fixture, model.params, roberta_load_weights, model.loss,
                                            {model.start_logits, model.end_logits},
                                            {"start_logits", "end_logits"},
                                            {"roberta.embeddings.word_embeddings.weight",
                                             "roberta.embeddings.position_embeddings.weight"});
}

TEST(RobertaHeads, TokenClassificationMatchesTransformers) {
  RobertaFixture fixture = load("roberta/token");
  Graph graph;
  BertTokenClassification model =
      roberta_for_token_classification(graph, fixture.config, fixture.options);
  testing::expect_matches_transformers(fixture, model.params, roberta_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

TEST(RobertaHeads, MaskedLmMatchesTransformers) {
  RobertaFixture fixture = load("roberta/mlm");
  Graph graph;
  BertMaskedLM model = roberta_for_masked_lm(graph, fixture.config, fixture.options);
  EXPECT_FALSE(model.params.contains("lm_head.decoder.weight"));
  testing::expect_matches_transformers(fixture, model.params, roberta_load_weights, model.loss,
                                       {model.logits}, {"logits"});
}

// What the Trainer runs: logits only at the labelled positions, the same loss and gradients.
TEST(RobertaHeads, MaskedLmPredictingOnlyLabelledPositionsMatchesTransformers) {
  RobertaFixture fixture = load("roberta/mlm");
  fixture.options.mlm_predictions = 9;  // 8 labelled tokens and a padding slot
  MlmPredictions predictions = compact_mlm_labels(fixture.expected.at("labels"), 9, "fixture");
  Graph graph;
  BertMaskedLM model = roberta_for_masked_lm(graph, fixture.config, fixture.options);
  testing::expect_matches_transformers(
      fixture, model.params, roberta_load_weights, model.loss, {}, {}, "",
      {{"masked_positions", predictions.positions}, {"masked_labels", predictions.labels}});
}

// The backends that train: RoBERTa's position ids (an integer count over a triangle) compile for
// Kiln's CPU backend and lower to StableHLO for XLA (the PJRT CPU plugin; skipped without it).
TEST(RobertaHeads, CpuAndXlaBackendsMatchTransformers) {
  RobertaFixture fixture = load("roberta/classifier");
  auto on = [](Backend& backend) {
    return [&backend](const Graph& graph, const std::vector<Value>& outputs,
                      const std::vector<Tensor>& arguments) {
      return backend.compile(graph, outputs)->run(arguments);
    };
  };
  {
    SCOPED_TRACE("cpu");
    Graph graph;
    BertClassifier model =
        roberta_for_sequence_classification(graph, fixture.config, fixture.options);
    std::unique_ptr<Backend> cpu = make_cpu_backend();
    testing::expect_head_matches_transformers(fixture, model.params, roberta_load_weights,
                                              model.loss, {model.logits}, {"logits"}, {}, {},
                                              on(*cpu));
  }
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  SCOPED_TRACE("xla");
  Graph graph;
  BertClassifier model =
      roberta_for_sequence_classification(graph, fixture.config, fixture.options);
  std::unique_ptr<Backend> xla = make_pjrt_backend(plugin);
  testing::expect_head_matches_transformers(fixture, model.params, roberta_load_weights, model.loss,
                                            {model.logits}, {"logits"}, {}, {}, on(*xla));
}

TEST(RobertaHeads, BareModelAndMaskedLmCheckpointsLoadIntoTheHeads) {
  RobertaFixture fixture = load("roberta/mlm");
  fixture.options.with_labels = false;
  Graph mlm_graph, bare_graph, token_graph;
  BertMaskedLM mlm = roberta_for_masked_lm(mlm_graph, fixture.config, fixture.options);
  roberta_load_weights(mlm.params, fixture.dir);

  // A bare RobertaModel checkpoint (no prefix, with a pooler and the position_ids buffer older
  // checkpoints store) loads into a head's encoder.
  ParameterSet bare(bare_graph);
  DropoutContext no_dropout;
  roberta_model(fixture.config, bert_inputs(bare_graph, fixture.options), bare, no_dropout, "");
  EXPECT_EQ(roberta_architecture(bare, "roberta"), "RobertaModel");
  std::map<std::string, Tensor> tensors;
  for (const Parameter& param : mlm.params.parameters()) {
    if (param.name.starts_with("roberta.")) tensors.emplace(param.name.substr(8), param.tensor);
  }
  tensors.emplace("embeddings.position_ids",
                  Tensor::from_doubles(DType::i64, {1, 3}, {0.0, 1.0, 2.0}));
  LoadReport report = bare.load(roberta_adapt_state_dict(tensors, bare), "bare", /*strict=*/false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"pooler.dense.bias", "pooler.dense.weight"}));
  EXPECT_TRUE(report.unexpected.empty());
  BertTokenClassification token =
      roberta_for_token_classification(token_graph, fixture.config, fixture.options);
  report = token.params.load(roberta_adapt_state_dict(tensors, token.params), "bare",
                             /*strict=*/false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"classifier.bias", "classifier.weight"}));
  EXPECT_TRUE(report.unexpected.empty());
  EXPECT_EQ(roberta_architecture(token.params, "roberta"), "RobertaForTokenClassification");

  // An older masked-LM checkpoint: the bias only under the decoder's name, the tied weight too.
  tensors.clear();
  for (const Parameter& param : mlm.params.parameters()) tensors.emplace(param.name, param.tensor);
  tensors["lm_head.decoder.bias"] = tensors.at("lm_head.bias");
  tensors.erase("lm_head.bias");
  tensors["lm_head.decoder.weight"] = tensors.at("roberta.embeddings.word_embeddings.weight");
  Graph legacy_graph;
  BertMaskedLM legacy = roberta_for_masked_lm(legacy_graph, fixture.config, fixture.options);
  report = legacy.params.load(roberta_adapt_state_dict(tensors, legacy.params), "legacy");
  EXPECT_TRUE(report.missing.empty());
  EXPECT_EQ(roberta_architecture(legacy.params, "roberta"), "RobertaForMaskedLM");
}

TEST(RobertaConfig, DefaultsFollowTheModelType) {
  RobertaConfig roberta = roberta_config_parse(R"({"model_type": "roberta"})", "config");
  EXPECT_EQ(roberta.vocab_size, 50265);
  EXPECT_EQ(roberta.pad_token_id, 1);
  RobertaConfig xlm = roberta_config_parse(R"({"model_type": "xlm-roberta"})", "config");
  EXPECT_EQ(xlm.vocab_size, 30522);
  EXPECT_EQ(xlm.pad_token_id, 1);
  // Written and read back unchanged, unknown keys (bos_token_id, ...) included.
  RobertaConfig saved = load("roberta/mlm").config;  // by transformers
  EXPECT_EQ(saved.extra.at("bos_token_id"), "0");
  EXPECT_EQ(roberta_config_parse(roberta_config_to_json(saved), "rewritten"), saved);
}

TEST(RobertaConfig, RefusesWhatItCannotBuild) {
  EXPECT_NE(testing::error_of([] {
              roberta_config_parse(R"({"model_type": "bert"})", "c.json");
            }).find("[c.json] \"model_type\" is \"bert\", not \"roberta\" or \"xlm-roberta\""),
            std::string::npos);
  EXPECT_NE(testing::error_of([] {
              roberta_config_parse(R"({"model_type": "roberta", "pad_token_id": null})", "c.json");
            }).find("\"pad_token_id\" is null"),
            std::string::npos);
  RobertaFixture fixture = load("roberta/classifier");
  fixture.options.seq_len = fixture.config.max_position_embeddings - 1;  // positions up to 40
  Graph graph;
  EXPECT_NE(testing::error_of([&] {
              roberta_for_sequence_classification(graph, fixture.config, fixture.options);
            }).find("beyond max_position_embeddings 40"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
