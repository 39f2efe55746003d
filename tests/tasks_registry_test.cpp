// The tasks registry: --task names, and the task of a trained model read from its config.json's
// architectures (transformers' class names) as `kiln evaluate` and `kiln predict` do; clm's
// block size as run_clm.py picks it.
#include "kiln/tasks/registry.h"

#include <gtest/gtest.h>

#include "kiln/tasks/clm.h"
#include "kiln/train/task.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::error_of;

// A config.json naming `architecture` (none when empty), in a fresh folder.
std::string config_naming(const std::string& architecture) {
  const fs::path path = testing::scratch_folder() / "config.json";
  testing::write_text(path, architecture.empty()
                                ? std::string("{}")
                                : R"({"architectures": [")" + architecture + R"("]})");
  return path.string();
}

TEST(TasksRegistry, EveryTaskNameHasItsRecipe) {
  for (std::string_view name : task_names()) EXPECT_EQ(find_task(name).name(), name);
  EXPECT_EQ(find_task("qa").head(), ModelHead::question_answering);
  EXPECT_EQ(error_of([] { find_task("pos"); }),
            "[--task] 'pos' is not one of: classification, qa, mlm, ner, clm");
  EXPECT_EQ(task_for_head(ModelHead::masked_lm), &find_task("mlm"));
  EXPECT_EQ(task_for_head(ModelHead::token_classification), &find_task("ner"));
  EXPECT_EQ(task_for_head(ModelHead::causal_lm), &find_task("clm"));
}

TEST(TasksRegistry, TheTaskOfATrainedModelIsItsArchitecturesOne) {
  EXPECT_EQ(task_of_model(config_naming("BertForSequenceClassification")), "classification");
  EXPECT_EQ(task_of_model(config_naming("BertForQuestionAnswering")), "qa");
  EXPECT_EQ(task_of_model(config_naming("BertForMaskedLM")), "mlm");
  EXPECT_EQ(task_of_model(config_naming("BertForTokenClassification")), "ner");
  EXPECT_EQ(task_of_model(config_naming("GPT2LMHeadModel")), "clm");
  EXPECT_EQ(task_of_model(config_naming("LlamaForCausalLM")), "clm");
  // A config without architectures is a new model's; a missing one is reported when it loads.
  EXPECT_EQ(task_of_model(config_naming("")), "classification");
  EXPECT_EQ(task_of_model((testing::scratch_folder() / "none.json").string()), "classification");
  const std::string bare = config_naming("BertModel");
  EXPECT_EQ(error_of([&] { task_of_model(bare); }),
            "[--task] " + bare +
                " names BertModel, a model of no task Kiln runs; give --task (classification, "
                "qa, mlm, ner, clm)");
}

TEST(TasksRegistry, ClmBlockSizeIsRunClmPys) {
  std::ostringstream log;
  // Given: capped at the tokenizer's model_max_length, with run_clm.py's warning.
  EXPECT_EQ(clm_block_size(64, 1024, 128, log), 64);
  EXPECT_EQ(clm_block_size(64, std::nullopt, 128, log), 64);
  EXPECT_EQ(log.str(), "");
  EXPECT_EQ(clm_block_size(64, 32, 128, log), 32);
  EXPECT_EQ(log.str(), "The block_size passed (64) is larger than the maximum length for the model "
                       "(32). Using block_size=32.\n");
  // Not given: model_max_length, or min(1024, positions) when the model takes fewer.
  log.str("");
  EXPECT_EQ(clm_block_size(std::nullopt, 512, 1024, log), 512);
  EXPECT_EQ(log.str(), "");
  EXPECT_EQ(clm_block_size(std::nullopt, 1024, 128, log), 128);
  EXPECT_EQ(clm_block_size(std::nullopt, std::nullopt, 2048, log), 1024);
  EXPECT_NE(log.str().find("Using block_size=128 instead. You can change that default value by "
                           "passing --block_size xxx."),
            std::string::npos);
  EXPECT_EQ(error_of([&] { clm_block_size(256, 1024, 128, log); }),
            "[--block_size] 256 is longer than the model takes (128 positions)");
}

}  // namespace
}  // namespace kiln
