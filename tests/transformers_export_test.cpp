// Models Kiln saves load in transformers. For each head of BERT (sequence classification, single-
// and multi-label; question answering; token classification; masked LM), RoBERTa, XLM-RoBERTa and
// ELECTRA (those and the discriminator) a Kiln-initialised model is saved with its family's
// save_pretrained; then, at test time, transformers loads the folder with the class its
// config.json names (tests/fixtures_gen/make_bert_fixtures.py --check-kiln-export), with no
// weight missing or unexpected, and computes the logits of Kiln's reference backend on the same
// batch to relative 1e-5.
// Needs KILN_TEST_PYTHON with torch and transformers on KILN_TEST_PYTHONPATH (scripts/setup.sh
// installs transformers for Debian's python3-torch); skips without them, and fails in CI.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bert_test_util.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/models/bert_heads.h"
#include "kiln/models/bert_pretrained.h"
#include "kiln/models/electra.h"
#include "kiln/models/electra_heads.h"
#include "kiln/models/electra_pretrained.h"
#include "kiln/models/roberta.h"
#include "kiln/models/roberta_heads.h"
#include "kiln/models/roberta_pretrained.h"
#include "shell_test_util.h"
#include "support/testing.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::BertFixture;

std::string python_command() {
  return std::string("PYTHONPATH='") + KILN_TEST_PYTHONPATH + "' '" + KILN_TEST_PYTHON + "'";
}

bool has_transformers() {
  static const bool found =
      testing::run_command(python_command() + " -c 'import torch, transformers'").exit_code == 0;
  return found;
}

#define KILN_REQUIRE_TRANSFORMERS()                                                            \
  KILN_SKIP_UNLESS(has_transformers(),                                                         \
                   "no torch + transformers for " KILN_TEST_PYTHON                             \
                   ": run scripts/setup.sh, or configure -DKILN_TEST_PYTHON=... "              \
                   "-DKILN_TEST_PYTHONPATH=...")

// The fixture's config with weights drawn 10 times wider than BERT's, so that every layer
// carries a visible signal to the logits.
template <typename Config>
Config wide_init(const testing::ModelFixture<Config>& fixture) {
  Config config = fixture.config;
  config.initializer_range = 0.2;
  return config;
}

// The fixture's batch without labels.
template <typename Config>
BertBuildOptions without_labels(const testing::ModelFixture<Config>& fixture) {
  BertBuildOptions options = fixture.options;
  options.with_labels = false;
  return options;
}

template <typename Config>
using SavePretrained = void (*)(const std::string& folder, Config config,
                                const ParameterSet& params);

// Initialises `params`, saves them with `save` into `folder` with the fixture's batch and Kiln's
// `outputs` (by transformers' output names) in kiln_outputs.safetensors.
template <typename Config>
void save_with_outputs(const fs::path& folder, const testing::ModelFixture<Config>& fixture,
                       const Config& config, ParameterSet& params,
                       const std::vector<Value>& outputs, const std::vector<std::string>& names,
                       SavePretrained<Config> save) {
  params.initialize(2024);
  std::map<std::string, Tensor> feeds = fixture.feeds();
  for (const char* label : {"labels", "start_positions", "end_positions"}) feeds.erase(label);
  std::vector<Tensor> values =
      evaluate_reference(params.graph(), outputs, params.arguments(feeds));
  save(folder.string(), config, params);
  for (size_t i = 0; i < names.size(); ++i) feeds[names[i]] = values[i];
  safetensors_write((folder / "kiln_outputs.safetensors").string(), feeds);
}

// Has transformers check the folders save_with_outputs wrote, in one process, which must report
// the outputs named in `names`; returns what it printed.
std::string expect_transformers_agrees_on(const std::vector<fs::path>& folders,
                                          const std::vector<std::string>& names) {
  std::string command = python_command() +
                        " '" KILN_SOURCE_DIR "/tests/fixtures_gen/make_bert_fixtures.py'" +
                        " --check-kiln-export";
  for (const fs::path& folder : folders) command += " '" + folder.string() + "'";
  testing::CommandResult check = testing::run_command(command);
  EXPECT_EQ(check.exit_code, 0) << check.output;
  for (const std::string& name : names) {
    EXPECT_NE(check.output.find(name + ": max |diff|"), std::string::npos) << check.output;
  }
  return check.output;
}

// One model, saved with bert_save_pretrained.
void expect_transformers_agrees(const BertFixture& fixture, const BertConfig& config,
                                ParameterSet& params, const std::vector<Value>& outputs,
                                const std::vector<std::string>& names) {
  fs::path folder = testing::scratch_folder() / "model";
  save_with_outputs(folder, fixture, config, params, outputs, names, bert_save_pretrained);
  expect_transformers_agrees_on({folder}, names);
}

TEST(TransformersLoadsKilnModels, SequenceClassification) {
  KILN_REQUIRE_TRANSFORMERS();
  for (const char* name : {"tiny", "multi_label"}) {
    SCOPED_TRACE(name);
    BertFixture fixture = testing::load_bert_fixture(name);
    Graph graph;
    BertConfig config = wide_init(fixture);
    BertClassifier model =
        bert_for_sequence_classification(graph, config, without_labels(fixture));
    expect_transformers_agrees(fixture, config, model.params, {model.logits}, {"logits"});
  }
}

TEST(TransformersLoadsKilnModels, QuestionAnswering) {
  KILN_REQUIRE_TRANSFORMERS();
  BertFixture fixture = testing::load_bert_fixture("qa");
  Graph graph;
  BertConfig config = wide_init(fixture);
  BertQuestionAnswering model =
      bert_for_question_answering(graph, config, without_labels(fixture));
  expect_transformers_agrees(fixture, config, model.params,
                             {model.start_logits, model.end_logits}, {"start_logits", "end_logits"});
}

TEST(TransformersLoadsKilnModels, MaskedLm) {
  KILN_REQUIRE_TRANSFORMERS();
  BertFixture fixture = testing::load_bert_fixture("mlm");
  Graph graph;
  BertConfig config = wide_init(fixture);
  BertMaskedLM model = bert_for_masked_lm(graph, config, without_labels(fixture));
  expect_transformers_agrees(fixture, config, model.params, {model.logits}, {"logits"});
}

template <typename Model>
std::pair<std::vector<Value>, std::vector<std::string>> outputs_of(const Model& model) {
  if constexpr (std::is_same_v<Model, BertQuestionAnswering>) {
    return {{model.start_logits, model.end_logits}, {"start_logits", "end_logits"}};
  } else {
    return {{model.logits}, {"logits"}};
  }
}

// Every head of RoBERTa, XLM-RoBERTa and ELECTRA, and BERT's token classifier: each saved by its
// family's save_pretrained into its own folder, then checked by one transformers process (loading
// torch takes seconds), which must load the class each folder is named after.
TEST(TransformersLoadsKilnModels, EncoderFamilyHeads) {
  KILN_REQUIRE_TRANSFORMERS();
  const fs::path scratch = testing::scratch_folder();
  std::vector<fs::path> folders;
  auto save_head = [&](const std::string& architecture, const std::string& fixture_dir,
                       auto read_config, auto build, auto save) {
    auto fixture = testing::load_model_fixture(
        std::string(KILN_SOURCE_DIR) + "/tests/data/" + fixture_dir, read_config);
    Graph graph;
    auto config = wide_init(fixture);
    auto model = build(graph, config, without_labels(fixture));
    auto [outputs, names] = outputs_of(model);
    folders.push_back(scratch / architecture);
    save_with_outputs(folders.back(), fixture, config, model.params, outputs, names, save);
  };
  save_head("BertForTokenClassification", "bert/token", bert_config_read,
            bert_for_token_classification, bert_save_pretrained);
  save_head("RobertaForSequenceClassification", "roberta/classifier", roberta_config_read,
            roberta_for_sequence_classification, roberta_save_pretrained);
  save_head("XLMRobertaForSequenceClassification", "xlm_roberta/classifier", roberta_config_read,
            roberta_for_sequence_classification, roberta_save_pretrained);
  save_head("RobertaForQuestionAnswering", "roberta/qa", roberta_config_read,
            roberta_for_question_answering, roberta_save_pretrained);
  save_head("RobertaForTokenClassification", "roberta/token", roberta_config_read,
            roberta_for_token_classification, roberta_save_pretrained);
  save_head("RobertaForMaskedLM", "roberta/mlm", roberta_config_read, roberta_for_masked_lm,
            roberta_save_pretrained);
  save_head("ElectraForSequenceClassification", "electra/classifier", electra_config_read,
            electra_for_sequence_classification, electra_save_pretrained);
  save_head("ElectraForQuestionAnswering", "electra/qa", electra_config_read,
            electra_for_question_answering, electra_save_pretrained);
  save_head("ElectraForTokenClassification", "electra/token", electra_config_read,
            electra_for_token_classification, electra_save_pretrained);
  save_head("ElectraForMaskedLM", "electra/mlm", electra_config_read, electra_for_masked_lm,
            electra_save_pretrained);
  save_head("ElectraForPreTraining", "electra/pretraining", electra_config_read,
            electra_for_pre_training, electra_save_pretrained);
  std::string output =
      expect_transformers_agrees_on(folders, {"logits", "start_logits", "end_logits"});
  for (const fs::path& folder : folders) {
    const std::string architecture = folder.filename().string();
    EXPECT_NE(output.find("loads " + architecture + " "), std::string::npos)
        << architecture << ":\n" << output;
  }
}

}  // namespace
}  // namespace kiln
