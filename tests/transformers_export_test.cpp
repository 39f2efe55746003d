// Models Kiln saves load in transformers. For each head (sequence classification, single- and
// multi-label; question answering; token classification; masked LM; ELECTRA's discriminator;
// GPT-2's causal LM) a Kiln-initialised BERT, DistilBERT, RoBERTa, XLM-RoBERTa, ELECTRA or GPT-2
// is saved with its family's *_save_pretrained; then, at test time, transformers loads the folder
// with the class its config.json names (tests/fixtures_gen/make_bert_fixtures.py
// --check-kiln-export), with no weight missing or unexpected, and computes the logits of Kiln's
// reference backend on the same batch to relative 1e-5.
// Needs KILN_TEST_PYTHON with torch and transformers on KILN_TEST_PYTHONPATH (scripts/setup.sh
// installs transformers for Debian's python3-torch); skips without them, and fails in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bert_test_util.h"
#include "distilbert_test_util.h"
#include "gpt2_test_util.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/models/bert_heads.h"
#include "kiln/models/bert_pretrained.h"
#include "kiln/models/distilbert_heads.h"
#include "kiln/models/distilbert_pretrained.h"
#include "kiln/models/gpt2_heads.h"
#include "kiln/models/gpt2_pretrained.h"
#include "kiln/models/electra.h"
#include "kiln/models/electra_heads.h"
#include "kiln/models/electra_pretrained.h"
#include "kiln/models/roberta.h"
#include "kiln/models/roberta_heads.h"
#include "kiln/models/roberta_pretrained.h"
#include "shell_test_util.h"
#include "support/testing.h"
#include "transformers_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::BertFixture;
using testing::python_command;

using testing::DistilBertFixture;

// The fixture's config with weights drawn 10 times wider than BERT's, so that every layer
// carries a visible signal to the logits.
template <typename Fixture>
auto wide_init(const Fixture& fixture) {
  auto config = fixture.config;
  config.initializer_range = 0.2;
  return config;
}

// The fixture's batch without labels.
template <typename Fixture>
BertBuildOptions without_labels(const Fixture& fixture) {
  BertBuildOptions options = fixture.options;
  options.with_labels = false;
  return options;
}

// A Kiln model saved for transformers' check, and the outputs Kiln wrote beside it.
struct SavedModel {
  fs::path folder;
  std::vector<std::string> outputs;
};

// Initialises `params`, saves them with `save_pretrained` into `folder`, and beside them the
// batch `feeds` (labels dropped) with Kiln's `outputs` by transformers' output `names`.
template <typename SavePretrained>
SavedModel save_with_outputs(std::map<std::string, Tensor> feeds, ParameterSet& params,
                             const std::vector<Value>& outputs,
                             const std::vector<std::string>& names, const fs::path& folder,
                             const SavePretrained& save_pretrained) {
  params.initialize(2024);
  for (const char* label : {"labels", "start_positions", "end_positions"}) feeds.erase(label);
  std::vector<Tensor> values =
      evaluate_reference(params.graph(), outputs, params.arguments(feeds));
  save_pretrained(folder.string());
  for (size_t i = 0; i < names.size(); ++i) feeds[names[i]] = values[i];
  safetensors_write((folder / "kiln_outputs.safetensors").string(), feeds);
  return SavedModel{folder, names};
}

// Has transformers load every model (one Python run) and compare its outputs with Kiln's.
void expect_transformers_agrees(const std::vector<SavedModel>& models) {
  std::string command =
      python_command() + " '" KILN_SOURCE_DIR "/tests/fixtures_gen/make_bert_fixtures.py'" +
      " --check-kiln-export";
  for (const SavedModel& model : models) command += " '" + model.folder.string() + "'";
  testing::CommandResult check = testing::run_command(command);
  EXPECT_EQ(check.exit_code, 0) << check.output;
  for (const SavedModel& model : models) {
    size_t at = check.output.find(model.folder.string() + ": transformers");
    ASSERT_NE(at, std::string::npos) << check.output;
    for (const std::string& name : model.outputs) {
      EXPECT_NE(check.output.find(name + ": max |diff|", at), std::string::npos) << check.output;
    }
  }
}

void expect_transformers_agrees(const BertFixture& fixture, const BertConfig& config,
                                ParameterSet& params, const std::vector<Value>& outputs,
                                const std::vector<std::string>& names) {
  expect_transformers_agrees({save_with_outputs(
      fixture.feeds(), params, outputs, names, testing::scratch_folder() / "model",
      [&](const std::string& dir) { bert_save_pretrained(dir, config, params); })});
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
  expect_transformers_agrees(fixture, config, model.params, {model.start_logits, model.end_logits},
                             {"start_logits", "end_logits"});
}

TEST(TransformersLoadsKilnModels, MaskedLm) {
  KILN_REQUIRE_TRANSFORMERS();
  BertFixture fixture = testing::load_bert_fixture("mlm");
  Graph graph;
  BertConfig config = wide_init(fixture);
  BertMaskedLM model = bert_for_masked_lm(graph, config, without_labels(fixture));
  expect_transformers_agrees(fixture, config, model.params, {model.logits}, {"logits"});
}

SavedModel save_distilbert(const DistilBertFixture& fixture, const DistilBertConfig& config,
                           ParameterSet& params, const std::vector<Value>& outputs,
                           const std::vector<std::string>& names, const fs::path& folder) {
  return save_with_outputs(fixture.feeds(), params, outputs, names, folder,
                           [&](const std::string& dir) {
                             distilbert_save_pretrained(dir, config, params);
                           });
}

// Every DistilBERT head, checked in one Python run. The masked-LM projector tied to the word
// embeddings is saved once, under the embeddings' name, as transformers saves it.
TEST(TransformersLoadsKilnModels, DistilBertHeads) {
  KILN_REQUIRE_TRANSFORMERS();
  const fs::path scratch = testing::scratch_folder();
  std::vector<SavedModel> saved;
  for (const char* name : {"classifier", "multi_label"}) {
    DistilBertFixture fixture = testing::load_distilbert_fixture(name);
    Graph graph;
    DistilBertConfig config = wide_init(fixture);
    DistilBertClassifier model =
        distilbert_for_sequence_classification(graph, config, without_labels(fixture));
    saved.push_back(save_distilbert(fixture, config, model.params, {model.logits}, {"logits"},
                                    scratch / name));
  }
  {
    DistilBertFixture fixture = testing::load_distilbert_fixture("qa");
    Graph graph;
    DistilBertConfig config = wide_init(fixture);
    DistilBertQuestionAnswering model =
        distilbert_for_question_answering(graph, config, without_labels(fixture));
    saved.push_back(save_distilbert(fixture, config, model.params,
                                    {model.start_logits, model.end_logits},
                                    {"start_logits", "end_logits"}, scratch / "qa"));
  }
  {
    DistilBertFixture fixture = testing::load_distilbert_fixture("token");
    Graph graph;
    DistilBertConfig config = wide_init(fixture);
    DistilBertTokenClassifier model =
        distilbert_for_token_classification(graph, config, without_labels(fixture));
    saved.push_back(save_distilbert(fixture, config, model.params, {model.logits}, {"logits"},
                                    scratch / "token"));
  }
  {
    DistilBertFixture fixture = testing::load_distilbert_fixture("mlm");
    Graph graph;
    DistilBertConfig config = wide_init(fixture);
    DistilBertMaskedLM model = distilbert_for_masked_lm(graph, config, without_labels(fixture));
    saved.push_back(save_distilbert(fixture, config, model.params, {model.logits}, {"logits"},
                                    scratch / "mlm"));
  }
  expect_transformers_agrees(saved);
}

// GPT-2's heads in one transformers run; the LM's head, tied to wte, is saved as transformers
// saves it (wte alone) and tied back by transformers.
TEST(TransformersLoadsKilnModels, Gpt2Heads) {
  KILN_REQUIRE_TRANSFORMERS();
  const fs::path scratch = testing::scratch_folder();
  std::vector<SavedModel> saved;
  auto save = [&](const char* name, auto build, auto outputs_of,
                  const std::vector<std::string>& names) {
    testing::Gpt2Fixture fixture = testing::load_gpt2_fixture(name);
    const Gpt2Config config = wide_init(fixture);
    Graph graph;
    auto model = build(graph, config, without_labels(fixture));
    saved.push_back(save_with_outputs(
        fixture.feeds(), model.params, outputs_of(model), names, scratch / name,
        [&](const std::string& dir) { gpt2_save_pretrained(dir, config, model.params); }));
  };
  auto logits = [](const auto& model) { return std::vector<Value>{model.logits}; };
  save("lm", gpt2_lm_head_model, logits, {"logits"});
  save("classifier", gpt2_for_sequence_classification, logits, {"logits"});
  save("token", gpt2_for_token_classification, logits, {"logits"});
  save("qa", gpt2_for_question_answering,
       [](const Gpt2QuestionAnswering& model) {
         return std::vector<Value>{model.start_logits, model.end_logits};
       },
       {"start_logits", "end_logits"});
  expect_transformers_agrees(saved);
}

template <typename Model>
std::pair<std::vector<Value>, std::vector<std::string>> outputs_of(const Model& model) {
  if constexpr (std::is_same_v<Model, BertQuestionAnswering>) {
    return {{model.start_logits, model.end_logits}, {"start_logits", "end_logits"}};
  } else {
    return {{model.logits}, {"logits"}};
  }
}

// BERT's token classifier and every head of RoBERTa, XLM-RoBERTa and ELECTRA, each built by
// `build` on the fixture tests/data/<fixture> and saved by its family's `save`; one Python run.
TEST(TransformersLoadsKilnModels, EncoderFamilyHeads) {
  KILN_REQUIRE_TRANSFORMERS();
  const fs::path scratch = testing::scratch_folder();
  std::vector<SavedModel> saved;
  auto save_head = [&](const std::string& fixture_name, auto read_config, auto build, auto save) {
    auto fixture = testing::load_model_fixture(
        std::string(KILN_SOURCE_DIR) + "/tests/data/" + fixture_name, read_config);
    Graph graph;
    auto config = wide_init(fixture);
    auto model = build(graph, config, without_labels(fixture));
    auto [outputs, names] = outputs_of(model);
    std::string folder = fixture_name;
    std::replace(folder.begin(), folder.end(), '/', '_');
    saved.push_back(save_with_outputs(fixture.feeds(), model.params, outputs, names,
                                      scratch / folder, [&](const std::string& dir) {
                                        save(dir, config, model.params);
                                      }));
  };
  save_head("bert/token", bert_config_read, bert_for_token_classification, bert_save_pretrained);
  save_head("roberta/classifier", roberta_config_read, roberta_for_sequence_classification,
            roberta_save_pretrained);
  save_head("xlm_roberta/classifier", roberta_config_read, roberta_for_sequence_classification,
            roberta_save_pretrained);
  save_head("roberta/qa", roberta_config_read, roberta_for_question_answering,
            roberta_save_pretrained);
  save_head("roberta/token", roberta_config_read, roberta_for_token_classification,
            roberta_save_pretrained);
  save_head("roberta/mlm", roberta_config_read, roberta_for_masked_lm, roberta_save_pretrained);
  save_head("electra/classifier", electra_config_read, electra_for_sequence_classification,
            electra_save_pretrained);
  save_head("electra/qa", electra_config_read, electra_for_question_answering,
            electra_save_pretrained);
  save_head("electra/token", electra_config_read, electra_for_token_classification,
            electra_save_pretrained);
  save_head("electra/mlm", electra_config_read, electra_for_masked_lm, electra_save_pretrained);
  save_head("electra/pretraining", electra_config_read, electra_for_pre_training,
            electra_save_pretrained);
  expect_transformers_agrees(saved);
}

}  // namespace
}  // namespace kiln
