// Models Kiln saves load in transformers. For each head (sequence classification, single- and
// multi-label; question answering; masked LM) a Kiln-initialised model is saved with
// bert_save_pretrained; then, at test time, transformers loads the folder with the class its
// config.json names (tests/fixtures_gen/make_bert_fixtures.py --check-kiln-export), with no
// weight missing or unexpected, and computes the logits of Kiln's reference backend on the same
// batch to relative 1e-5.
// Needs KILN_TEST_PYTHON with torch and transformers on KILN_TEST_PYTHONPATH (scripts/setup.sh
// installs transformers for Debian's python3-torch); skips without them, and fails in CI.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bert_test_util.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/models/bert_heads.h"
#include "kiln/models/bert_pretrained.h"
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
BertConfig wide_init(const BertFixture& fixture) {
  BertConfig config = fixture.config;
  config.initializer_range = 0.2;
  return config;
}

// The fixture's batch without labels.
BertBuildOptions without_labels(const BertFixture& fixture) {
  BertBuildOptions options = fixture.options;
  options.with_labels = false;
  return options;
}

// Initialises `params`, saves them into a scratch folder with the fixture's batch and Kiln's
// `outputs` (by transformers' output names), and has transformers check them.
void expect_transformers_agrees(const BertFixture& fixture, const BertConfig& config,
                                ParameterSet& params, const std::vector<Value>& outputs,
                                const std::vector<std::string>& names) {
  params.initialize(2024);
  std::map<std::string, Tensor> feeds = fixture.feeds();
  for (const char* label : {"labels", "start_positions", "end_positions"}) feeds.erase(label);
  std::vector<Tensor> values =
      evaluate_reference(params.graph(), outputs, params.arguments(feeds));

  fs::path folder = testing::scratch_folder() / "model";
  bert_save_pretrained(folder.string(), config, params);
  for (size_t i = 0; i < names.size(); ++i) feeds[names[i]] = values[i];
  safetensors_write((folder / "kiln_outputs.safetensors").string(), feeds);

  testing::CommandResult check = testing::run_command(
      python_command() + " '" KILN_SOURCE_DIR "/tests/fixtures_gen/make_bert_fixtures.py'" +
      " --check-kiln-export '" + folder.string() + "'");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  for (const std::string& name : names) {
    EXPECT_NE(check.output.find(name + ": max |diff|"), std::string::npos) << check.output;
  }
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

}  // namespace
}  // namespace kiln
