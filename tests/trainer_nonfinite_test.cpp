// Non-finite steps: a NaN or infinite loss or gradient norm stops training with an error naming
// the step and the first non-finite tensor (the default, --nan_inf_strategy stop), or is
// reported and skipped (skip) with the weights and AdamW state exactly as before the step.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/train/checkpoint.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::TinyRun;

// A learning rate so large that step 1 moves the weights to about +-1e30 and step 2 overflows.
TrainingArguments overflowing_args(const fs::path& output_dir, int64_t max_steps) {
  TrainingArguments args = testing::tiny_args(output_dir);
  args.learning_rate = 1e30;
  args.max_steps = max_steps;
  args.save_strategy = SaveStrategy::steps;
  args.save_steps = static_cast<double>(max_steps);
  return args;
}

ClassificationDataset sentiment(const fs::path& dir) {
  return testing::load_sentiment(testing::write_sentiment_tsv(dir / "train.tsv", 16, 4));
}

TEST(TrainerNonFinite, StopNamesTheStepAndTheFirstNonFiniteTensor) {
  fs::path dir = testing::scratch_folder();
  ClassificationDataset data = sentiment(dir);
  TinyRun one_step(dir / "a", overflowing_args(dir / "a" / "out", 1));
  one_step.trainer->train(data, nullptr);

  TinyRun run(dir / "b", overflowing_args(dir / "b" / "out", 4));
  std::string message = testing::error_of([&] { run.trainer->train(data, nullptr); });
  EXPECT_NE(message.find("[step 2]"), std::string::npos) << message;
  EXPECT_NE(message.find("the first non-finite value is in tensor %"), std::string::npos)
      << message;
  EXPECT_NE(message.find("(forward)"), std::string::npos) << message;
  EXPECT_NE(message.find("--nan_inf_strategy skip"), std::string::npos) << message;
  // The guard inside the step program kept step 1's weights.
  EXPECT_EQ(testing::weights_difference(run.trainer->weights(), one_step.trainer->weights()), "");
  EXPECT_EQ(run.trainer->state().global_step, 1);
}

TEST(TrainerNonFinite, SkipLeavesWeightsAndOptimizerStateUntouched) {
  fs::path dir = testing::scratch_folder();
  ClassificationDataset data = sentiment(dir);
  TinyRun one_step(dir / "a", overflowing_args(dir / "a" / "out", 1));
  one_step.trainer->train(data, nullptr);

  TrainingArguments args = overflowing_args(dir / "b" / "out", 4);
  args.nan_inf_strategy = "skip";
  TinyRun run(dir / "b", args);
  run.trainer->train(data, nullptr);
  EXPECT_EQ(run.trainer->state().global_step, 4);
  const std::string log = run.log.str();
  for (int step : {2, 3, 4}) {
    EXPECT_NE(log.find("warning: [step " + std::to_string(step) + "]"), std::string::npos) << log;
  }
  EXPECT_NE(log.find("update skipped (--nan_inf_strategy skip)"), std::string::npos) << log;
  EXPECT_EQ(testing::weights_difference(run.trainer->weights(), one_step.trainer->weights()), "");

  // AdamW's moments and step count in the checkpoint are those after step 1.
  OptimizerState skipped =
      optimizer_state_read((dir / "b" / "out" / "checkpoint-4" / "optimizer.safetensors").string());
  OptimizerState after_one =
      optimizer_state_read((dir / "a" / "out" / "checkpoint-1" / "optimizer.safetensors").string());
  EXPECT_EQ(skipped.step, 1);
  EXPECT_EQ(testing::weights_difference(skipped.slots, after_one.slots), "");
  // Logged losses stay finite (HF's logging_nan_inf_filter) and the run can resume.
  for (const nlohmann::json& entry : run.trainer->state().log_history) {
    if (entry.contains("loss")) {
      EXPECT_TRUE(std::isfinite(entry["loss"].get<double>())) << entry;
    }
  }
  TrainingArguments more = args;
  more.max_steps = 5;
  TinyRun resumed(dir / "b", more);
  resumed.trainer->train(data, nullptr, checkpoint_path(dir / "b" / "out", 4));
  EXPECT_EQ(resumed.trainer->state().global_step, 5);
}

TEST(TrainerNonFinite, NanInAWeightIsNamedAsTheFirstBadTensor) {
  fs::path dir = testing::scratch_folder();
  ClassificationDataset data = sentiment(dir);
  fs::path vocab = testing::write_vocab(dir);
  Tokenizer tokenizer = tokenizer_load_vocab(vocab.string());
  BertConfig config = testing::tiny_config(tokenizer.vocab_size());
  TensorMap weights = testing::initial_weights(config, 7);
  weights.at("classifier.weight").set(3, std::nan(""));
  TrainingArguments args = testing::tiny_args(dir / "out");
  training_arguments_post_init(args);
  std::unique_ptr<Backend> backend = make_reference_backend();
  std::ostringstream log;
  Trainer trainer(args, config, weights, tokenizer, *backend, log);
  std::string message = testing::error_of([&] { trainer.train(data, nullptr); });
  EXPECT_NE(message.find("[step 1]"), std::string::npos) << message;
  EXPECT_NE(message.find("input 'classifier.weight' f32(2,8): 1 NaN and 0 infinite of 16 "
                         "values, the first at element 3"),
            std::string::npos)
      << message;
}

TEST(TrainerNonFinite, StrategyMustBeStopOrSkip) {
  TrainingArguments args;
  args.nan_inf_strategy = "ignore";
  EXPECT_NE(testing::error_of([&] { training_arguments_post_init(args); })
                .find("[--nan_inf_strategy] 'ignore' is not one of: stop, skip"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
