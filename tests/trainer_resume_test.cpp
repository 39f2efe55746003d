// Resuming: a run interrupted after a checkpoint and resumed from it logs the same losses and
// ends with the same weights, bit for bit, as the run that was never interrupted (dropout on,
// clipping, weight decay, warmup, gradient accumulation, several epochs); and a checkpoint
// folder holds every file HF's has.
#include <gtest/gtest.h>

#include "kiln/train/checkpoint.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

using testing::TinyRun;

// Records each update's unrounded loss; optionally stops the run after a given step.
class Recorder : public TrainerCallback {
 public:
  explicit Recorder(int64_t stop_after = -1) : stop_after_(stop_after) {}
  std::string name() const override { return "Recorder"; }
  void on_step_end(const TrainingArguments&, const TrainerState& state, TrainerControl& control,
                   const StepInfo& info) override {
    losses[state.global_step] = info.loss;
    if (state.global_step == stop_after_) control.should_training_stop = true;
  }
  std::map<int64_t, double> losses;

 private:
  int64_t stop_after_;
};

TrainingArguments resumable_args(const fs::path& output_dir) {
  TrainingArguments args = testing::tiny_args(output_dir);
  args.gradient_accumulation_steps = 2;  // 8 batches of 4 (the last padded): 4 updates an epoch
  args.num_train_epochs = 3;
  args.weight_decay = 0.01;
  args.warmup_steps = 2;
  args.max_grad_norm = 0.5;
  return args;
}

std::vector<double> logged_losses(const TrainerState& state) {
  std::vector<double> out;
  for (const nlohmann::json& entry : state.log_history) {
    if (entry.contains("loss")) out.push_back(entry["loss"].get<double>());
  }
  return out;
}

TEST(TrainerResume, ContinuesExactlyAsTheUninterruptedRun) {
  fs::path dir = testing::scratch_folder();
  ClassificationDataset data =
      testing::load_sentiment(testing::write_sentiment_tsv(dir / "train.tsv", 30, 3));

  TinyRun straight(dir / "a", resumable_args(dir / "a" / "out"), /*dropout=*/0.1);
  auto all = std::make_shared<Recorder>();
  straight.trainer->add_callback(all);
  straight.trainer->train(data, nullptr);
  ASSERT_EQ(straight.trainer->state().global_step, 12);
  ASSERT_EQ(all->losses.size(), 12u);

  // Interrupted at the end of an epoch (step 4) and in the middle of one (step 6).
  for (int64_t stop : {4, 6}) {
    SCOPED_TRACE("checkpoint at step " + std::to_string(stop));
    fs::path out = dir / ("b" + std::to_string(stop)) / "out";
    TrainingArguments args = resumable_args(out);
    args.save_strategy = SaveStrategy::steps;
    args.save_steps = static_cast<double>(stop);
    {
      TinyRun first(out.parent_path(), args, 0.1);
      first.trainer->add_callback(std::make_shared<Recorder>(stop));
      first.trainer->train(data, nullptr);
      ASSERT_EQ(first.trainer->state().global_step, stop);
    }
    TinyRun resumed(out.parent_path(), args, 0.1);
    auto rest = std::make_shared<Recorder>();
    resumed.trainer->add_callback(rest);
    resumed.trainer->train(data, nullptr, checkpoint_path(out, stop));
    EXPECT_EQ(resumed.trainer->state().global_step, 12);
    ASSERT_EQ(rest->losses.size(), static_cast<size_t>(12 - stop));
    for (const auto& [step, loss] : rest->losses) {
      EXPECT_EQ(loss, all->losses.at(step)) << "step " << step;
    }
    EXPECT_EQ(logged_losses(resumed.trainer->state()), logged_losses(straight.trainer->state()));
    EXPECT_EQ(testing::weights_difference(resumed.trainer->weights(), straight.trainer->weights()),
              "");
  }
  // Dropout was on: a different seed gives other losses, so the equality above is not vacuous.
  TrainingArguments reseeded = resumable_args(dir / "c" / "out");
  reseeded.seed = 43;
  TinyRun other(dir / "c", reseeded, 0.1);
  auto other_losses = std::make_shared<Recorder>();
  other.trainer->add_callback(other_losses);
  other.trainer->train(data, nullptr);
  EXPECT_NE(other_losses->losses.at(1), all->losses.at(1));
}

// Every optimizer's slots go through the checkpoint: resumed mid-epoch, the run ends on the
// uninterrupted run's weights bit for bit. Resuming with another --optim is an error.
class TrainerResumeOptimizer : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(TrainerResumeOptimizer, ContinuesExactly) {
  auto [optim, optim_args] = GetParam();
  fs::path dir = testing::scratch_folder();
  ClassificationDataset data =
      testing::load_sentiment(testing::write_sentiment_tsv(dir / "train.tsv", 30, 3));
  auto args_for = [&](const fs::path& out) {
    TrainingArguments args = resumable_args(out);
    args.num_train_epochs = 2;  // 8 updates
    args.optim = optim;
    args.optim_args = optim_args;
    args.learning_rate = 1e-3;
    return args;
  };
  TinyRun straight(dir / "a", args_for(dir / "a" / "out"), 0.1);
  straight.trainer->train(data, nullptr);
  ASSERT_EQ(straight.trainer->state().global_step, 8);

  fs::path out = dir / "b" / "out";
  TrainingArguments args = args_for(out);
  args.save_strategy = SaveStrategy::steps;
  args.save_steps = 6;
  {
    TinyRun first(out.parent_path(), args, 0.1);
    first.trainer->add_callback(std::make_shared<Recorder>(6));
    first.trainer->train(data, nullptr);
  }
  EXPECT_EQ(optimizer_state_read((checkpoint_path(out, 6) / "optimizer.safetensors").string())
                .optimizer,
            optimizer_kind(optim));
  TinyRun resumed(out.parent_path(), args, 0.1);
  resumed.trainer->train(data, nullptr, checkpoint_path(out, 6));
  EXPECT_EQ(logged_losses(resumed.trainer->state()), logged_losses(straight.trainer->state()));
  EXPECT_EQ(testing::weights_difference(resumed.trainer->weights(), straight.trainer->weights()),
            "");

  TrainingArguments other = args;
  other.optim = std::string(optim) == "sgd" ? "adagrad" : "sgd";
  other.optim_args = "";
  TinyRun mismatched(out.parent_path(), other, 0.1);
  EXPECT_NE(testing::error_of([&] {
              mismatched.trainer->train(data, nullptr, checkpoint_path(out, 6));
            }).find("the optimizer state is " + optimizer_kind(optim) + "'s; this run's --optim is " +
                    other.optim),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    EachOptimizer, TrainerResumeOptimizer,
    ::testing::Values(std::pair{"adafactor", ""}, std::pair{"sgd", "momentum=0.9,dampening=0.1"},
                      std::pair{"adagrad", "lr_decay=0.01"},
                      std::pair{"rmsprop", "momentum=0.5,centered=true"}),
    [](const auto& info) { return std::string(info.param.first); });

TEST(TrainerResume, CheckpointHoldsEveryFile) {
  fs::path dir = testing::scratch_folder();
  fs::path train_file = testing::write_sentiment_tsv(dir / "train.tsv", 16, 5);
  ClassificationDataset train = testing::load_sentiment(train_file);
  ClassificationDataset eval = testing::load_sentiment(
      testing::write_sentiment_tsv(dir / "eval.tsv", 6, 9), train.label_names);
  TrainingArguments args = testing::tiny_args(dir / "out");
  args.max_steps = 4;
  args.eval_strategy = IntervalStrategy::steps;
  args.eval_steps = 2;
  args.save_strategy = SaveStrategy::steps;
  args.save_steps = 2;
  args.load_best_model_at_end = true;
  TinyRun run(dir, args);
  run.trainer->train(train, &eval);

  fs::path checkpoint = dir / "out" / "checkpoint-2";
  for (const char* file :
       {"model.safetensors", "config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json",
        "special_tokens_map.json", "optimizer.safetensors", "scheduler.json", "rng_state.json",
        "trainer_state.json", "training_args.json"}) {
    EXPECT_TRUE(fs::exists(checkpoint / file)) << file;
  }
  EXPECT_TRUE(fs::exists(dir / "out" / "checkpoint-4" / "trainer_state.json"));
  EXPECT_FALSE(fs::exists(dir / "out" / "tmp-checkpoint-2"));

  TrainerState state = trainer_state_load((checkpoint / "trainer_state.json").string());
  EXPECT_EQ(state.global_step, 2);
  EXPECT_DOUBLE_EQ(*state.epoch, 0.5);  // 2 of the 4 batches of the epoch
  EXPECT_EQ(state.max_steps, 4);
  EXPECT_EQ(state.logging_steps, 1);
  EXPECT_EQ(state.eval_steps, 2);
  EXPECT_EQ(state.save_steps, 2);
  EXPECT_EQ(state.train_batch_size, 4);
  ASSERT_EQ(state.log_history.size(), 3u);  // two training logs, one evaluation
  for (const char* key : {"loss", "grad_norm", "learning_rate", "epoch", "step"}) {
    EXPECT_TRUE(state.log_history[0].contains(key)) << key;
  }
  EXPECT_EQ(state.log_history[1]["step"], 2);
  EXPECT_TRUE(state.log_history[2].contains("eval_loss"));
  EXPECT_TRUE(state.log_history[2].contains("eval_accuracy"));
  EXPECT_EQ(state.best_metric, state.log_history[2]["eval_loss"].get<double>());
  EXPECT_EQ(state.best_global_step, 2);
  EXPECT_EQ(state.best_model_checkpoint, checkpoint.string());
  EXPECT_TRUE(state.stateful_callbacks.contains("TrainerControl"));

  OptimizerState optimizer = optimizer_state_read((checkpoint / "optimizer.safetensors").string());
  EXPECT_EQ(optimizer.step, 2);
  EXPECT_EQ(optimizer.slots.size(), 2 * run.trainer->weights().size());  // exp_avg, exp_avg_sq
  EXPECT_EQ(lr_schedule_read_state((checkpoint / "scheduler.json").string()).last_epoch, 2);
  RngState rng = rng_state_read((checkpoint / "rng_state.json").string());
  EXPECT_EQ(rng.epoch, 0);
  EXPECT_EQ(rng.step_in_epoch, 2);
  EXPECT_EQ(rng.sampler_position, 8);
  TrainingArguments saved;
  training_arguments_load_json(saved, (checkpoint / "training_args.json").string());
  EXPECT_EQ(saved.eval_steps, 2);
  EXPECT_EQ(bert_config_read((checkpoint / "config.json").string()).id2label,
            (std::vector<std::string>{"0", "1"}));
}

}  // namespace
}  // namespace kiln
