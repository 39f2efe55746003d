// reduce_lr_on_plateau in the Trainer: stepped with the evaluation metric after each evaluation
// (Trainer._evaluate), so the rate falls after a plateau of evaluations, and a resumed run
// continues with the checkpoint's scheduler state.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/train/checkpoint.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr double kLr = 1e-2;

// Evaluates after every step. A relative threshold of 0.9 counts only a loss below a tenth of the
// best as an improvement, so every evaluation after the first is a bad one: with patience 1, the
// evaluations at steps 3, 5 and 7 halve the rate.
TrainingArguments plateau_args(const fs::path& output_dir) {
  TrainingArguments args = testing::tiny_args(output_dir);
  args.learning_rate = kLr;
  args.max_steps = 8;
  args.eval_strategy = IntervalStrategy::steps;
  args.eval_steps = 1;
  args.save_strategy = SaveStrategy::steps;
  args.save_steps = 2;
  args.lr_scheduler_type = LrSchedulerType::reduce_lr_on_plateau;
  args.lr_scheduler_kwargs = {{"patience", 1}, {"factor", 0.5}, {"threshold", 0.9}};
  return args;
}

// The logged value of `key` at each step that logged it.
std::map<int64_t, double> logged(const TrainerState& state, const std::string& key) {
  std::map<int64_t, double> out;
  for (const nlohmann::json& entry : state.log_history) {
    if (entry.contains(key)) out[entry["step"].get<int64_t>()] = entry[key].get<double>();
  }
  return out;
}

testing::SentimentSplits make_data(const fs::path& dir) {
  return testing::sentiment_splits(dir, 24, 8);
}

TEST(TrainerPlateau, LowersTheRateAfterAPlateauAndResumesExactly) {
  fs::path dir = testing::scratch_folder();
  testing::SentimentSplits data = make_data(dir);
  testing::TinyRun straight(dir / "a", plateau_args(dir / "a" / "out"));
  straight.trainer->train(data.train, &data.eval);
  const TrainerState& state = straight.trainer->state();

  std::map<int64_t, double> losses = logged(state, "eval_loss");
  ASSERT_EQ(losses.size(), 8u);
  // The premise of the expected rates: no evaluation improves on the first by the threshold.
  for (const auto& [step, loss] : losses) EXPECT_GE(loss, 0.1 * losses.at(1)) << "step " << step;
  // The rate each step used, as logged: halved by the evaluations at steps 3, 5 and 7.
  const std::map<int64_t, double> expected = {{1, kLr},     {2, kLr},     {3, kLr},
                                              {4, kLr / 2}, {5, kLr / 2}, {6, kLr / 4},
                                              {7, kLr / 4}, {8, kLr / 8}};
  EXPECT_EQ(logged(state, "learning_rate"), expected);

  // Resumed from step 4 (after two bad evaluations and one cut): the same rates, losses and
  // weights as the uninterrupted run; a fresh scheduler would use kLr again at step 5.
  TrainingArguments args = plateau_args(dir / "b" / "out");
  testing::TinyRun resumed(dir / "b", args);
  resumed.trainer->train(data.train, &data.eval, checkpoint_path(dir / "a" / "out", 4));
  std::map<int64_t, double> resumed_rates = logged(resumed.trainer->state(), "learning_rate");
  EXPECT_EQ(resumed_rates, expected);
  EXPECT_EQ(logged(resumed.trainer->state(), "eval_loss"), losses);
  EXPECT_EQ(testing::weights_difference(resumed.trainer->weights(), straight.trainer->weights()),
            "");
}

TEST(TrainerPlateau, NeedsAnEvalStrategy) {
  TrainingArguments args;
  args.lr_scheduler_type = LrSchedulerType::reduce_lr_on_plateau;
  try {
    training_arguments_post_init(args);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "[--lr_scheduler_type] lr_scheduler_type reduce_lr_on_plateau requires an eval "
                 "strategy");
  }
  args.eval_strategy = IntervalStrategy::epoch;
  training_arguments_post_init(args);
  EXPECT_EQ(args.metric_for_best_model, "loss");  // as HF, the metric it steps with
}

}  // namespace
}  // namespace kiln
