// Every scheduler type against transformers.get_scheduler's learning rate at every step
// (tests/fixtures_gen/make_lr_schedule_fixtures.py), the checks of --lr_scheduler_kwargs, and
// scheduler.json round trips (reduce_lr_on_plateau's state; files from before the kwargs).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/ir/error.h"
#include "kiln/train/checkpoint_json.h"
#include "kiln/train/lr_schedule.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json fixture_cases() {
  return read_json_object(std::string(KILN_SOURCE_DIR) +
                          "/tests/fixtures/lr_schedule/transformers_schedules.json")["cases"];
}

LrSchedulerType type_of(const json& c) {
  return *lr_scheduler_type_from_name(c["lr_scheduler_type"].get<std::string>());
}

std::string label(const json& c) {
  return c["lr_scheduler_type"].get<std::string>() + " " + c["lr_scheduler_kwargs"].dump();
}

void expect_close(double actual, double expected, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected)) << what;
}

TEST(LrScheduleFixtureTest, EveryStepEqualsTransformers) {
  int lambda_cases = 0;
  for (const json& c : fixture_cases()) {
    if (c.contains("metrics")) continue;
    LrSchedule s = lr_schedule_make(
        type_of(c), c["base_lr"].get<double>(), c["num_warmup_steps"].get<int64_t>(),
        c["num_training_steps"].get<int64_t>(), c["lr_scheduler_kwargs"]);
    const json& lrs = c["lrs"];
    for (size_t step = 0; step < lrs.size(); ++step) {
      expect_close(s.lr(static_cast<int64_t>(step)), lrs[step].get<double>(),
                   label(c) + " at step " + std::to_string(step));
    }
    ++lambda_cases;
  }
  EXPECT_EQ(lambda_cases, 20);
}

// Steps the plateau scheduler with the case's metrics from `from`, checking the lr after each.
void step_plateau(LrPlateau& plateau, const json& c, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    plateau.step(c["metrics"][i].get<double>());
    expect_close(plateau.lr, c["lrs"][i].get<double>(),
                 label(c) + " after metric " + std::to_string(i));
  }
}

TEST(LrScheduleFixtureTest, PlateauFollowsTheMetricsAsTorch) {
  int plateau_cases = 0;
  for (const json& c : fixture_cases()) {
    if (!c.contains("metrics")) continue;
    LrSchedule s = lr_schedule_make(LrSchedulerType::reduce_lr_on_plateau,
                                    c["base_lr"].get<double>(), 0, 0, c["lr_scheduler_kwargs"]);
    ASSERT_TRUE(s.plateau.has_value());
    EXPECT_EQ(s.lr(0), c["base_lr"].get<double>());
    step_plateau(*s.plateau, c, 0, c["metrics"].size());
    const json& state = c["final_state"];
    EXPECT_EQ(s.plateau->best, state["best"].get<double>()) << label(c);
    EXPECT_EQ(s.plateau->num_bad_epochs, state["num_bad_epochs"].get<int64_t>()) << label(c);
    EXPECT_EQ(s.plateau->cooldown_counter, state["cooldown_counter"].get<int64_t>()) << label(c);
    EXPECT_EQ(s.plateau->last_epoch, state["last_epoch"].get<int64_t>()) << label(c);
    ++plateau_cases;
  }
  EXPECT_EQ(plateau_cases, 6);
}

// A checkpoint in the middle of a plateau (cooldown running, bad epochs counted) resumes onto
// the same learning rates as the uninterrupted run.
TEST(LrScheduleFixtureTest, PlateauStateRoundTripsThroughSchedulerJson) {
  const fs::path path = fs::path(testing::TempDir()) / "plateau_scheduler.json";
  for (const json& c : fixture_cases()) {
    if (!c.contains("metrics")) continue;
    for (size_t cut : {size_t{0}, size_t{4}, size_t{9}}) {
      LrSchedule s = lr_schedule_make(LrSchedulerType::reduce_lr_on_plateau,
                                      c["base_lr"].get<double>(), 0, 50, c["lr_scheduler_kwargs"]);
      step_plateau(*s.plateau, c, 0, cut);
      lr_schedule_write_state(path.string(), {s, 7});
      LrScheduleState resumed = lr_schedule_read_state(path.string());
      EXPECT_EQ(resumed.last_epoch, 7);
      ASSERT_TRUE(resumed.schedule.plateau.has_value());
      step_plateau(*resumed.schedule.plateau, c, cut, c["metrics"].size());
    }
  }
}

TEST(LrScheduleFixtureTest, KwargsAreReadBack) {
  const fs::path path = fs::path(testing::TempDir()) / "wsd_scheduler.json";
  json kwargs = {{"num_decay_steps", 12}, {"decay_type", "linear"}, {"min_lr_ratio", 0.1}};
  LrSchedule s = lr_schedule_make(LrSchedulerType::warmup_stable_decay, 1e-3, 3, 40, kwargs);
  lr_schedule_write_state(path.string(), {s, 30});
  LrScheduleState back = lr_schedule_read_state(path.string());
  EXPECT_EQ(back.schedule.kwargs, kwargs);
  for (int64_t step = 0; step <= 40; ++step) EXPECT_EQ(back.schedule.lr(step), s.lr(step));
}

// scheduler.json as Kiln wrote it before --lr_scheduler_kwargs: num_cycles and no kwargs.
TEST(LrScheduleFixtureTest, ReadsSchedulerJsonFromBeforeKwargs) {
  const fs::path path = fs::path(testing::TempDir()) / "old_scheduler.json";
  std::ofstream(path) << R"({"lr_scheduler_type": "cosine", "base_lr": 0.001, "num_warmup_steps": 2,
    "num_training_steps": 10, "num_cycles": 0.5, "last_epoch": 4, "last_lr": 0.0007})";
  LrScheduleState state = lr_schedule_read_state(path.string());
  EXPECT_EQ(state.last_epoch, 4);
  EXPECT_EQ(state.schedule.type, LrSchedulerType::cosine);
  EXPECT_EQ(state.schedule.num_cycles, 0.5);
  EXPECT_EQ(state.schedule.num_training_steps, 10);
}

std::string make_error(LrSchedulerType type, const json& kwargs) {
  try {
    lr_schedule_make(type, 1e-3, 2, 20, kwargs);
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(LrScheduleFixtureTest, BadKwargsNameTheFlagAndKey) {
  using T = LrSchedulerType;
  EXPECT_EQ(make_error(T::cosine, {{"power", 2}}),
            "[--lr_scheduler_kwargs] key 'power': the cosine scheduler takes only num_cycles");
  EXPECT_EQ(make_error(T::linear, {{"num_cycles", 2}}),
            "[--lr_scheduler_kwargs] key 'num_cycles': the linear scheduler takes no arguments");
  EXPECT_EQ(make_error(T::polynomial, {{"power", "two"}}),
            "[--lr_scheduler_kwargs] key 'power': expected a number, got \"two\"");
  EXPECT_EQ(make_error(T::polynomial, {{"lr_end", 1e-2}}),
            "[--lr_scheduler_kwargs] key 'lr_end': lr_end (0.01) must be smaller than initial lr "
            "(0.001)");
  EXPECT_EQ(make_error(T::inverse_sqrt, {{"timescale", 2.5}}),
            "[--lr_scheduler_kwargs] key 'timescale': expected an integer, got 2.5");
  EXPECT_NE(make_error(T::cosine_with_min_lr, json::object()).find("needs min_lr or min_lr_rate"),
            std::string::npos);
  EXPECT_NE(make_error(T::cosine_with_min_lr, {{"min_lr", 1e-5}, {"min_lr_rate", 0.1}})
                .find("Only one of min_lr or min_lr_rate"),
            std::string::npos);
  EXPECT_NE(make_error(T::warmup_stable_decay, json::object()).find("needs num_decay_steps"),
            std::string::npos);
  EXPECT_EQ(make_error(T::warmup_stable_decay, {{"num_decay_steps", 5}, {"decay_type", "exp"}}),
            "[--lr_scheduler_kwargs] key 'decay_type': expected one of 'linear', 'cosine', "
            "'1-sqrt', got \"exp\"");
  EXPECT_EQ(make_error(T::reduce_lr_on_plateau, {{"factor", 1.5}}),
            "[--lr_scheduler_kwargs] key 'factor': Factor should be < 1.0, got 1.5");
  EXPECT_EQ(make_error(T::reduce_lr_on_plateau, {{"num_cycles", 1}}),
            "[--lr_scheduler_kwargs] key 'num_cycles': the reduce_lr_on_plateau scheduler takes "
            "only cooldown, eps, factor, min_lr, mode, patience, threshold, threshold_mode");
}

}  // namespace
}  // namespace kiln
