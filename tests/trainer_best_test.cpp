// Best-model bookkeeping: save_total_limit rotation keeps the best checkpoint, early stopping
// stops, and load_best_model_at_end ends with the best checkpoint's weights.
#include <gtest/gtest.h>

#include "kiln/train/checkpoint.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

testing::SentimentSplits make_data(const fs::path& dir) {
  return testing::sentiment_splits(dir, 16, 8);
}

// Evaluates and saves every 2 steps; "best" is the highest eval loss, which training lowers,
// so the first checkpoint stays the best while newer ones are saved.
TrainingArguments best_args(const fs::path& output_dir, int64_t max_steps) {
  TrainingArguments args = testing::tiny_args(output_dir);
  args.max_steps = max_steps;
  args.eval_strategy = IntervalStrategy::steps;
  args.eval_steps = 2;
  args.save_strategy = SaveStrategy::steps;
  args.save_steps = 2;
  args.load_best_model_at_end = true;
  args.metric_for_best_model = "eval_loss";
  args.greater_is_better = true;
  return args;
}

std::vector<double> eval_losses(const TrainerState& state) {
  std::vector<double> out;
  for (const nlohmann::json& entry : state.log_history) {
    if (entry.contains("eval_loss")) out.push_back(entry["eval_loss"].get<double>());
  }
  return out;
}

TEST(TrainerBest, RotationKeepsTheBestCheckpoint) {
  fs::path dir = testing::scratch_folder();
  testing::SentimentSplits data = make_data(dir);
  TrainingArguments args = best_args(dir / "out", 8);
  args.save_total_limit = 2;
  testing::TinyRun run(dir, args);
  run.trainer->train(data.train, &data.eval);
  const TrainerState& state = run.trainer->state();
  std::vector<double> losses = eval_losses(state);
  ASSERT_EQ(losses.size(), 4u);
  ASSERT_EQ(std::max_element(losses.begin(), losses.end()) - losses.begin(), 0);  // step 2
  EXPECT_EQ(state.best_model_checkpoint, (dir / "out" / "checkpoint-2").string());
  EXPECT_EQ(state.best_metric, losses[0]);
  EXPECT_EQ(state.best_global_step, 2);
  // Limit 2: the newest checkpoint and the best one.
  EXPECT_EQ(list_checkpoints(dir / "out"),
            (std::vector<fs::path>{dir / "out" / "checkpoint-2", dir / "out" / "checkpoint-8"}));
  EXPECT_NE(run.log.str().find("Deleting older checkpoint"), std::string::npos);
}

// save_strategy best: a checkpoint at exactly the evaluations that set a new best of
// metric_for_best_model (computed here from the logged eval losses), none at the end; with
// load_best_model_at_end the strategies need not match.
TEST(TrainerBest, SaveStrategyBestSavesOnlyImprovingEvaluations) {
  fs::path dir = testing::scratch_folder();
  testing::SentimentSplits data = make_data(dir);
  TrainingArguments args = testing::tiny_args(dir / "out");
  args.max_steps = 9;
  args.eval_strategy = IntervalStrategy::steps;
  args.eval_steps = 1;
  args.save_strategy = SaveStrategy::best;
  args.metric_for_best_model = "accuracy";  // rises and stalls: some evaluations do not improve
  args.load_best_model_at_end = true;
  args.learning_rate = 0.05;
  training_arguments_post_init(args);
  testing::TinyRun run(dir, args);
  run.trainer->train(data.train, &data.eval);
  std::vector<fs::path> expected;
  std::optional<double> best;
  int64_t step = 0;
  for (const nlohmann::json& entry : run.trainer->state().log_history) {
    if (!entry.contains("eval_accuracy")) continue;
    ++step;
    const double accuracy = entry["eval_accuracy"].get<double>();
    if (!best || accuracy > *best) {
      best = accuracy;
      expected.push_back(dir / "out" / ("checkpoint-" + std::to_string(step)));
    }
  }
  ASSERT_EQ(step, 9);
  ASSERT_LT(expected.size(), 9u) << "every evaluation improved: the test checks nothing";
  EXPECT_EQ(list_checkpoints(dir / "out"), expected);
  EXPECT_EQ(run.trainer->state().best_model_checkpoint, expected.back().string());
}

TEST(TrainerBest, SaveStrategyBestNeedsAMetricAndEvaluations) {
  TrainingArguments args = testing::tiny_args("out");
  args.save_strategy = SaveStrategy::best;
  args.eval_strategy = IntervalStrategy::epoch;
  EXPECT_THROW(training_arguments_post_init(args), Error);
  args.metric_for_best_model = "loss";
  args.eval_strategy = IntervalStrategy::no;
  EXPECT_THROW(training_arguments_post_init(args), Error);
}

TEST(TrainerBest, LoadBestModelAtEndLoadsTheBestWeights) {
  fs::path dir = testing::scratch_folder();
  testing::SentimentSplits data = make_data(dir);
  testing::TinyRun run(dir, best_args(dir / "out", 6));
  run.trainer->train(data.train, &data.eval);
  const TrainerState& state = run.trainer->state();
  ASSERT_EQ(state.best_model_checkpoint, (dir / "out" / "checkpoint-2").string());
  TensorMap best = testing::read_weights(dir / "out" / "checkpoint-2" / "model.safetensors");
  TensorMap last = testing::read_weights(dir / "out" / "checkpoint-6" / "model.safetensors");
  EXPECT_EQ(testing::weights_difference(run.trainer->weights(), best), "");
  EXPECT_NE(testing::weights_difference(run.trainer->weights(), last), "");
  EXPECT_NE(run.log.str().find("Loading best model from"), std::string::npos);
  // Evaluating now gives the best checkpoint's metric back.
  EXPECT_NEAR(run.trainer->evaluate(data.eval)["eval_loss"].get<double>(), *state.best_metric,
              1e-9);
}

TEST(TrainerBest, EarlyStoppingStopsAfterPatienceEvaluations) {
  fs::path dir = testing::scratch_folder();
  testing::SentimentSplits data = make_data(dir);
  TrainingArguments args = best_args(dir / "out", 40);
  args.early_stopping_patience = 2;
  // No change is ever large enough to count as an improvement: the evaluations after the
  // first each count against the patience, whatever the losses do.
  args.early_stopping_threshold = 1e9;
  testing::TinyRun run(dir, args);
  run.trainer->train(data.train, &data.eval);
  const TrainerState& state = run.trainer->state();
  EXPECT_EQ(state.global_step, 6);  // evaluations at 2, 4 and 6
  EXPECT_EQ(eval_losses(state).size(), 3u);
  const nlohmann::json& saved = state.stateful_callbacks["EarlyStoppingCallback"];
  EXPECT_EQ(saved["args"]["early_stopping_patience"], 2);
  EXPECT_EQ(saved["attributes"]["early_stopping_patience_counter"], 2);
}

TEST(TrainerBest, EarlyStoppingWaitsWhileTheMetricImproves) {
  fs::path dir = testing::scratch_folder();
  testing::SentimentSplits data = make_data(dir);
  TrainingArguments args = best_args(dir / "out", 8);
  args.greater_is_better = false;  // lower eval loss is better, and training lowers it
  args.early_stopping_patience = 1;
  testing::TinyRun run(dir, args);
  run.trainer->train(data.train, &data.eval);
  std::vector<double> losses = eval_losses(run.trainer->state());
  ASSERT_TRUE(std::is_sorted(losses.rbegin(), losses.rend()));  // each one an improvement
  EXPECT_EQ(run.trainer->state().global_step, 8);
}

TEST(TrainerBest, EvalOnStartEvaluatesBeforeTheFirstStep) {
  fs::path dir = testing::scratch_folder();
  testing::SentimentSplits data = make_data(dir);
  TrainingArguments args = best_args(dir / "out", 2);
  args.eval_on_start = true;
  testing::TinyRun run(dir, args);
  run.trainer->train(data.train, &data.eval);
  const TrainerState& state = run.trainer->state();
  std::vector<double> losses = eval_losses(state);
  ASSERT_EQ(losses.size(), 2u);  // at step 0, then at step 2
  const nlohmann::json* first = nullptr;
  for (const nlohmann::json& entry : state.log_history) {
    if (!first && entry.contains("eval_loss")) first = &entry;
  }
  EXPECT_EQ((*first)["step"], 0);
  EXPECT_NE(losses[0], losses[1]);
  // The evaluation at the start is a sanity check, not a candidate for the best model.
  EXPECT_EQ(state.best_global_step, 2);
}

TEST(TrainerBest, EvalOnStartNeedsEvaluationData) {
  fs::path dir = testing::scratch_folder();
  testing::SentimentSplits data = make_data(dir);
  TrainingArguments args = testing::tiny_args(dir / "out");
  args.max_steps = 1;
  args.eval_on_start = true;
  testing::TinyRun run(dir, args);
  try {
    run.trainer->train(data.train, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--eval_on_start"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
