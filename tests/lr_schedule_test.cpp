// Learning-rate schedules against hand-computed values and transformers' own schedulers, and the
// scheduler.json state of a checkpoint.
#include "kiln/train/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

LrSchedule schedule(LrSchedulerType type, int64_t warmup, int64_t total, double lr = 1e-3) {
  LrSchedule s;
  s.type = type;
  s.base_lr = lr;
  s.num_warmup_steps = warmup;
  s.num_training_steps = total;
  return s;
}

// The optimizer's lr at each step (before optimizer.step(); scheduler.step()) of
// get_scheduler(name, AdamW(lr=1e-3), num_warmup_steps, num_training_steps) in
// transformers 5.24.0 with torch 2.15, printed with repr().
void expect_hf(const LrSchedule& s, const std::map<int64_t, double>& expected) {
  for (const auto& [step, lr] : expected) {
    EXPECT_DOUBLE_EQ(s.lr(step), lr) << lr_scheduler_type_name(s.type) << " at step " << step;
  }
}

TEST(LrScheduleTest, LinearByHand) {
  LrSchedule s = schedule(LrSchedulerType::linear, 4, 20, 2.0);
  EXPECT_EQ(s.lr(0), 0.0);  // HF's first update has learning rate 0 under warmup
  EXPECT_EQ(s.lr(1), 0.5);  // 2.0 * 1/4
  EXPECT_EQ(s.lr(3), 1.5);
  EXPECT_EQ(s.lr(4), 2.0);   // peak: (20 - 4) / 16
  EXPECT_EQ(s.lr(12), 1.0);  // (20 - 12) / 16 = 0.5
  EXPECT_EQ(s.lr(19), 0.125);
  EXPECT_EQ(s.lr(20), 0.0);  // decayed to 0 at num_training_steps
  EXPECT_EQ(s.lr(25), 0.0);  // and clamped after it
}

TEST(LrScheduleTest, CosineByHand) {
  LrSchedule s = schedule(LrSchedulerType::cosine, 2, 10, 1.0);
  EXPECT_EQ(s.lr(1), 0.5);
  EXPECT_DOUBLE_EQ(s.lr(2), 1.0);
  EXPECT_DOUBLE_EQ(s.lr(6), 0.5);  // halfway: 0.5 * (1 + cos(pi / 2))
  EXPECT_DOUBLE_EQ(s.lr(4), 0.5 * (1 + std::cos(std::numbers::pi * 0.25)));
  EXPECT_NEAR(s.lr(10), 0.0, 1e-16);
  // Past the end the half wave turns up again, as in HF (0.5 * (1 + cos(pi * 12/8))).
  EXPECT_DOUBLE_EQ(s.lr(14), 0.5);
}

TEST(LrScheduleTest, ConstantsByHand) {
  LrSchedule constant = schedule(LrSchedulerType::constant, 5, 10, 3.0);
  EXPECT_EQ(constant.lr(0), 3.0);  // get_constant_schedule ignores warmup
  EXPECT_EQ(constant.lr(100), 3.0);
  LrSchedule warm = schedule(LrSchedulerType::constant_with_warmup, 4, 10, 3.0);
  EXPECT_EQ(warm.lr(0), 0.0);
  EXPECT_EQ(warm.lr(2), 1.5);
  EXPECT_EQ(warm.lr(4), 3.0);
  EXPECT_EQ(warm.lr(100), 3.0);
}

TEST(LrScheduleTest, MatchesTransformersSchedulers) {
  expect_hf(schedule(LrSchedulerType::linear, 3, 10),
            {{0, 0.0},
             {1, 0.0003333333333333333},
             {2, 0.0006666666666666666},
             {3, 0.001},
             {4, 0.0008571428571428571},
             {7, 0.00042857142857142855},
             {9, 0.00014285714285714284},
             {10, 0.0},
             {12, 0.0}});
  expect_hf(schedule(LrSchedulerType::linear, 0, 10),
            {{0, 0.001}, {1, 0.0009000000000000001}, {5, 0.0005}, {10, 0.0}});
  expect_hf(schedule(LrSchedulerType::cosine, 3, 10),
            {{0, 0.0},
             {1, 0.0003333333333333333},
             {3, 0.001},
             {4, 0.0009504844339512095},
             {5, 0.0008117449009293668},
             {6, 0.0006112604669781572},
             {8, 0.00018825509907063325},
             {9, 4.9515566048790485e-05},
             {12, 0.00018825509907063315}});
  expect_hf(schedule(LrSchedulerType::cosine, 0, 7),
            {{0, 0.001},
             {1, 0.0009504844339512095},
             {2, 0.0008117449009293668},
             {3, 0.0006112604669781572},
             {5, 0.00018825509907063325},
             {8, 4.951556604879043e-05}});
  EXPECT_NEAR(schedule(LrSchedulerType::cosine, 3, 10).lr(10), 0.0, 1e-19);
  expect_hf(schedule(LrSchedulerType::constant, 3, 10), {{0, 0.001}, {5, 0.001}, {12, 0.001}});
  expect_hf(schedule(LrSchedulerType::constant_with_warmup, 3, 10),
            {{0, 0.0}, {1, 0.0003333333333333333}, {3, 0.001}, {12, 0.001}});
}

TEST(LrScheduleTest, ScheduleForArguments) {
  TrainingArguments args;
  args.learning_rate = 2e-5;
  args.lr_scheduler_type = LrSchedulerType::cosine;
  args.warmup_ratio = 0.1;
  LrSchedule s = lr_schedule_for(args, 25);
  EXPECT_EQ(s.type, LrSchedulerType::cosine);
  EXPECT_EQ(s.base_lr, 2e-5);
  EXPECT_EQ(s.num_warmup_steps, 3);  // ceil(25 * 0.1)
  EXPECT_EQ(s.num_training_steps, 25);
  EXPECT_EQ(s.num_cycles, 0.5);
  EXPECT_DOUBLE_EQ(s.lr(1), 2e-5 / 3);
}

TEST(LrScheduleTest, StateRoundTripsThroughSchedulerJson) {
  fs::path folder = fs::path(::testing::TempDir()) / "kiln_lr_schedule";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string path = (folder / "scheduler.json").string();

  LrScheduleState state{schedule(LrSchedulerType::linear, 4, 20), 7};
  lr_schedule_write_state(path, state);
  LrScheduleState back = lr_schedule_read_state(path);
  EXPECT_EQ(back.schedule.type, LrSchedulerType::linear);
  EXPECT_EQ(back.schedule.base_lr, 1e-3);
  EXPECT_EQ(back.schedule.num_warmup_steps, 4);
  EXPECT_EQ(back.schedule.num_training_steps, 20);
  EXPECT_EQ(back.schedule.num_cycles, 0.5);
  EXPECT_EQ(back.last_epoch, 7);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // torch's LambdaLR state after 7 steps has _last_lr [0.0008125000000000001].
  EXPECT_NE(text.find("\"last_lr\": 0.0008125000000000001"), std::string::npos) << text;

  auto read_error = [&](const std::string& json) {
    std::ofstream(path) << json;
    try {
      lr_schedule_read_state(path);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_EQ(read_error(R"({"lr_scheduler_type": "linear"})"),
            "[" + path + "] key 'base_lr' is missing");
  EXPECT_EQ(read_error(R"({"lr_scheduler_type": "exponential"})"),
            "[" + path + "] key 'lr_scheduler_type': unknown scheduler 'exponential'");
  EXPECT_EQ(read_error(R"({"lr_scheduler_type": "linear", "base_lr": 1, "num_warmup_steps": 1.5})"),
            "[" + path + "] key 'num_warmup_steps': expected an integer, got 1.5");
}

}  // namespace
}  // namespace kiln
