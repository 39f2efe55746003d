// Training logs: Python-compatible JSON, the JSONL log, the progress bar, the metrics table and
// the *_results.json files, each against what Python/transformers produce.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "kiln/ir/error.h"
#include "kiln/train/log_jsonl.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/log_progress.h"
#include "kiln/train/log_python_json.h"
#include "kiln/train/results_files.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::scratch_folder;
using testing::read_text;

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(PythonJson, FloatReprMatchesPython) {
  // Left: Python 3.11's repr() of the same double.
  const std::pair<double, const char*> cases[] = {
      {0.1, "0.1"},
      {1e-05, "1e-05"},
      {2.5e-05, "2.5e-05"},
      {0.0001, "0.0001"},
      {0.00011, "0.00011"},
      {1.0, "1.0"},
      {100.0, "100.0"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {-1.5, "-1.5"},
      {1e15, "1000000000000000.0"},
      {9999999999999998.0, "9999999999999998.0"},
      {1e16, "1e+16"},
      {1.2e16, "1.2e+16"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {1e100, "1e+100"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {0.6931471824645996, "0.6931471824645996"},
      {1.0 / 3.0, "0.3333333333333333"},
      {static_cast<double>(2.5e-05f), "2.499999936844688e-05"},
      {kNan, "nan"},
      {kInf, "inf"},
      {-kInf, "-inf"},
  };
  for (const auto& [value, text] : cases) EXPECT_EQ(python_float_repr(value), text) << text;
}

TEST(PythonJson, RoundMatchesPython) {
  // Python: round(2.675, 2) == 2.67 (the double is below 2.675), round(0.12345, 4) == 0.1235,
  // round(-0.00001, 4) == -0.0, round(0.5, 0) == 0.0 (half to even), round(1.5, 0) == 2.0.
  EXPECT_EQ(python_float_repr(python_round(2.675, 2)), "2.67");
  EXPECT_EQ(python_float_repr(python_round(0.12345, 4)), "0.1235");
  EXPECT_EQ(python_float_repr(python_round(-0.00001, 4)), "-0.0");
  EXPECT_EQ(python_round(0.5, 0), 0.0);
  EXPECT_EQ(python_round(1.5, 0), 2.0);
  EXPECT_EQ(python_round(3725.45671, 4), 3725.4567);
  EXPECT_EQ(python_round(1e20, 4), 1e20);
  EXPECT_TRUE(std::isnan(python_round(kNan, 4)));
  EXPECT_THROW(python_round(1.0, -1), Error);
}

TEST(PythonJson, DumpsAsJsonDumps) {
  json value = {{"b", {1, 2.0, "x"}},
                {"a", {{"empty_list", json::array()}, {"empty_dict", json::object()}}},
                {"c", nullptr},
                {"d", true},
                {"lr", 2.5e-05},
                {"nan", kNan},
                {"inf", -kInf}};
  // json.dumps(value, sort_keys=True)
  EXPECT_EQ(python_json_dumps(value),
            R"({"a": {"empty_dict": {}, "empty_list": []}, "b": [1, 2.0, "x"], "c": null, )"
            R"("d": true, "inf": -Infinity, "lr": 2.5e-05, "nan": NaN})");
  // json.dumps(value, sort_keys=True, indent=2)
  EXPECT_EQ(python_json_dumps(value, 2), R"({
  "a": {
    "empty_dict": {},
    "empty_list": []
  },
  "b": [
    1,
    2.0,
    "x"
  ],
  "c": null,
  "d": true,
  "inf": -Infinity,
  "lr": 2.5e-05,
  "nan": NaN
})");
  EXPECT_EQ(python_json_dumps(json::array({1, 2}), 0), "[\n1,\n2\n]");
}

TEST(PythonJson, EscapesStringsAsEnsureAscii) {
  // json.dumps("q\"\\\n\t\x01\x7f/é€😀") in Python.
  EXPECT_EQ(python_json_dumps("q\"\\\n\t\x01\x7f/\u00e9\u20ac\U0001F600"),
            R"("q\"\\\n\t\u0001\u007f/\u00e9\u20ac\ud83d\ude00")");
  EXPECT_EQ(python_json_dumps(json{{"\u00e9", 1}, {"z", 2}}), R"({"z": 2, "\u00e9": 1})");
  EXPECT_THROW(python_json_dumps(std::string("bad \xC3")), Error);
  EXPECT_THROW(python_json_dumps(std::string("\xED\xA0\x80")), Error);  // a UTF-8 surrogate
}

TEST(PythonJson, LoadsNanAndInfinityOutsideStrings) {
  json value = python_json_loads(
      R"({"a": NaN, "b": [Infinity, -Infinity, 1], "s": "NaN -Infinity \" NaN"})", "x.json");
  EXPECT_TRUE(std::isnan(value["a"].get<double>()));
  EXPECT_EQ(value["b"][0].get<double>(), kInf);
  EXPECT_EQ(value["b"][1].get<double>(), -kInf);
  EXPECT_TRUE(value["b"][2].is_number_integer());
  EXPECT_EQ(value["s"], "NaN -Infinity \" NaN");
  EXPECT_EQ(python_json_dumps(value), R"({"a": NaN, "b": [Infinity, -Infinity, 1], )"
                                      R"("s": "NaN -Infinity \" NaN"})");
  try {
    python_json_loads("{\"a\": 1,\n \"b\": }", "x.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("[x.json] invalid JSON: ")) << e.what();
  }
}

TEST(JsonlLog, OneFlushedLinePerEntry) {
  fs::path path = scratch_folder() / "log.jsonl";
  {
    JsonlLogWriter log(path.string(), false);
    log.write({{"loss", 0.6931}, {"learning_rate", 1e-05}, {"epoch", 0.5}, {"step", 2}});
    // Flushed: readable before the writer closes.
    EXPECT_EQ(read_text(path),
              "{\"epoch\": 0.5, \"learning_rate\": 1e-05, \"loss\": 0.6931, \"step\": 2}\n");
    EXPECT_THROW(log.write(json::array()), Error);
  }
  {
    JsonlLogWriter log(path.string(), true);
    log.write({{"eval_loss", 0.5}, {"step", 4}});
  }
  EXPECT_EQ(read_text(path),
            "{\"epoch\": 0.5, \"learning_rate\": 1e-05, \"loss\": 0.6931, \"step\": 2}\n"
            "{\"eval_loss\": 0.5, \"step\": 4}\n");
  { JsonlLogWriter truncate(path.string(), false); }
  EXPECT_EQ(read_text(path), "");
  EXPECT_THROW(JsonlLogWriter((scratch_folder() / "missing" / "log.jsonl").string(), false), Error);
}

// A clock that advances half a second per call to update.
struct FakeClock {
  double now = 100.0;
};

TEST(ProgressBar, PlainLinesEveryLoggingStepsWithoutATerminal) {
  FakeClock clock;
  std::ostringstream out;
  ProgressBar bar(10, 0, 4, out, false, [&] { return clock.now; });
  for (int step = 1; step <= 10; ++step) {
    clock.now += 0.5;
    bar.update(step, 128, step % 4 == 0 ? std::optional(0.6931 / step) : std::nullopt, 2e-5);
  }
  bar.finish();
  EXPECT_EQ(out.str(),
            "step 4/10 (40%) | loss 0.1733 | lr 2.00e-05 | 256 tok/s | elapsed 00:02 | ETA 00:03\n"
            "step 8/10 (80%) | loss 0.0866 | lr 2.00e-05 | 256 tok/s | elapsed 00:04 | ETA 00:01\n"
            "step 10/10 (100%) | loss 0.0866 | lr 2.00e-05 | 256 tok/s | elapsed 00:05 | "
            "ETA 00:00\n");
}

TEST(ProgressBar, RedrawsInPlaceOnATerminal) {
  FakeClock clock;
  std::ostringstream out;
  ProgressBar bar(4, 2, 100, out, true, [&] { return clock.now; });  // resumed at step 2
  clock.now += 1.0;
  bar.update(3, 1000, 0.5, 1e-4);
  bar.message("eval_loss 0.4");
  clock.now += 0.05;  // within a tenth of a second of the last draw: not redrawn
  bar.update(3, 0, std::nullopt, std::nullopt);
  clock.now += 1.0;
  bar.update(4, 1000, 0.25, 0.0);
  bar.finish();
  // The first step after the start (which compiled) gives no speed; the last one's 1000 tokens
  // took the 1.05 s since step 3.
  std::string first = "[###############-----] step 3/4 (75%) | loss 0.5000 | lr 1.00e-04 | "
                      "elapsed 00:01 | ETA ?";
  std::string last = "[####################] step 4/4 (100%) | loss 0.2500 | lr 0.00e+00 | "
                     "952 tok/s | elapsed 00:02 | ETA 00:00";
  // The message clears the bar's line, then the bar is drawn again under it.
  EXPECT_EQ(out.str(), "\r" + first + "\x1b[K" + "\r\x1b[Keval_loss 0.4\n" + "\r" + first +
                           "\x1b[K" + "\r" + last + "\x1b[K\n");
}

// The lines of a bar without a terminal whose steps take `seconds` each and process `tokens`;
// the interval of step `paused` (if any) holds a pause.
std::string plain_progress(int64_t total, int64_t logging_steps, const std::vector<double>& seconds,
                           int64_t tokens, int64_t paused = 0, std::string unit = "step") {
  FakeClock clock;
  std::ostringstream out;
  ProgressBar bar(total, 0, logging_steps, out, false, [&] { return clock.now; }, std::move(unit));
  for (size_t i = 0; i < seconds.size(); ++i) {
    const auto step = static_cast<int64_t>(i + 1);
    clock.now += seconds[i];
    if (step == paused) bar.exclude_interval();
    bar.update(step, tokens, std::nullopt, std::nullopt);
  }
  return out.str();
}

// Step 1 compiles for 60 s, steps 2-5 take 2 s each, step 6 holds a 100 s evaluation, step 7
// takes 2 s: speed and ETA come from the steady steps (2 s and 100 tokens each), not from the
// 170 s of wall time (which would give an ETA of about 73 s for the last 3 steps). The lines of
// steps 1 and 6 come 30 s or more after the previous one.
TEST(ProgressBar, EtaComesFromSteadyStepsOnly) {
  EXPECT_EQ(plain_progress(10, 7, {60, 2, 2, 2, 2, 100, 2}, 100, 6),
            "step 1/10 (10%) | elapsed 01:00 | ETA ?\n"
            "step 6/10 (60%) | 50 tok/s | elapsed 02:48 | ETA 00:08\n"
            "step 7/10 (70%) | 50 tok/s | elapsed 02:50 | ETA 00:06\n");
}

// Without a terminal and with logging steps far apart, a line still comes every 30 s: at 36 s,
// 72 s and the last batch (84 s); the first batch (12 s) is not timed.
TEST(ProgressBar, PlainLineAtLeastEveryThirtySeconds) {
  EXPECT_EQ(plain_progress(7, 1000, std::vector<double>(7, 12.0), 0, 0, "evaluating batch"),
            "evaluating batch 3/7 (42%) | elapsed 00:36 | ETA 00:48\n"
            "evaluating batch 6/7 (85%) | elapsed 01:12 | ETA 00:12\n"
            "evaluating batch 7/7 (100%) | elapsed 01:24 | ETA 00:00\n");
}

TEST(ProgressBar, FormatsLongTimesAndUnknowns) {
  ProgressSnapshot s;
  s.step = 0;
  s.total_steps = 100;
  s.elapsed_seconds = 3725.9;
  EXPECT_EQ(format_progress(s), "step 0/100 (0%) | elapsed 1:02:05 | ETA ?");
  EXPECT_THROW(ProgressBar(10, 0, 0, std::cerr, false), Error);
}

// transformers 5.24's log_metrics(trainer, "train", ...) printed exactly this for these values.
TEST(MetricsTable, MatchesTransformersLogMetrics) {
  json train = {{"epoch", 3.0},
                {"total_flos", 1.2e16},
                {"train_loss", 0.69314718},
                {"train_runtime", 3725.4567},
                {"train_samples_per_second", 21.333},
                {"train_steps_per_second", 2.667},
                {"train_samples", 80},
                {"train_mem_cpu_alloc_delta", 5242880},
                {"done", true}};
  EXPECT_EQ(format_metrics_table("train", train),
            "***** train metrics *****\n"
            "  done                      =          1\n"
            "  epoch                     =        3.0\n"
            "  total_flos                = 11175870GF\n"
            "  train_loss                =     0.6931\n"
            "  train_mem_cpu_alloc_delta =        5MB\n"
            "  train_runtime             = 1:02:05.45\n"
            "  train_samples             =         80\n"
            "  train_samples_per_second  =     21.333\n"
            "  train_steps_per_second    =      2.667\n");
  json eval = {{"epoch", 3.0},         {"eval_accuracy", 0.75},
               {"eval_loss", 0.5},     {"eval_runtime", 0.1234},
               {"eval_samples", 16},   {"eval_samples_per_second", 129.668},
               {"eval_steps_per_second", 16.208}};
  EXPECT_EQ(format_metrics_table("eval", eval),
            "***** eval metrics *****\n"
            "  epoch                   =        3.0\n"
            "  eval_accuracy           =       0.75\n"
            "  eval_loss               =        0.5\n"
            "  eval_runtime            = 0:00:00.12\n"
            "  eval_samples            =         16\n"
            "  eval_samples_per_second =    129.668\n"
            "  eval_steps_per_second   =     16.208\n");
  // str(datetime.timedelta(seconds=90061)) == "1 day, 1:01:01".
  EXPECT_EQ(format_metrics_table("x", {{"x_runtime", 90061.5}}),
            "***** x metrics *****\n  x_runtime = 1 day, 1:01:01.50\n");
}

TEST(MetricsTable, SpeedMetricsRoundAsTransformers) {
  EXPECT_EQ(speed_metrics("train", 3.75, 80, 10, 4096),
            json({{"train_runtime", 3.75},
                  {"train_samples_per_second", 21.333},
                  {"train_steps_per_second", 2.667},
                  {"train_tokens_per_second", 1092.267}}));
  EXPECT_EQ(speed_metrics("eval", 0.123456, 16, std::nullopt),
            json({{"eval_runtime", 0.1235}, {"eval_samples_per_second", 129.601}}));
  EXPECT_EQ(speed_metrics("eval", 0.0, 16, 2), json({{"eval_runtime", 0.0}}));
}

// transformers' save_metrics(trainer, "train", ...) then save_metrics(trainer, "eval", ...)
// wrote exactly these three files.
TEST(ResultsFiles, MatchTransformersSaveMetrics) {
  fs::path dir = scratch_folder();
  save_metrics(dir.string(), "train",
               {{"epoch", 3.0},
                {"total_flos", 1.2e16},
                {"train_loss", 0.69314718},
                {"train_runtime", 3725.4567},
                {"train_samples_per_second", 21.333},
                {"train_steps_per_second", 2.667},
                {"train_samples", 80}});
  save_metrics(dir.string(), "eval",
               {{"epoch", 3.0},
                {"eval_accuracy", 0.75},
                {"eval_loss", 0.5},
                {"eval_runtime", 0.1234},
                {"eval_samples", 16},
                {"eval_samples_per_second", 129.668},
                {"eval_steps_per_second", 16.208}});
  EXPECT_EQ(read_text(dir / "train_results.json"),
            "{\n    \"epoch\": 3.0,\n    \"total_flos\": 1.2e+16,\n"
            "    \"train_loss\": 0.69314718,\n"
            "    \"train_runtime\": 3725.4567,\n    \"train_samples\": 80,\n"
            "    \"train_samples_per_second\": 21.333,\n    \"train_steps_per_second\": 2.667\n}");
  EXPECT_EQ(read_text(dir / "eval_results.json"),
            "{\n    \"epoch\": 3.0,\n    \"eval_accuracy\": 0.75,\n    \"eval_loss\": 0.5,\n"
            "    \"eval_runtime\": 0.1234,\n    \"eval_samples\": 16,\n"
            "    \"eval_samples_per_second\": 129.668,\n    \"eval_steps_per_second\": 16.208\n}");
  EXPECT_EQ(read_text(dir / "all_results.json"),
            "{\n    \"epoch\": 3.0,\n    \"eval_accuracy\": 0.75,\n    \"eval_loss\": 0.5,\n"
            "    \"eval_runtime\": 0.1234,\n    \"eval_samples\": 16,\n"
            "    \"eval_samples_per_second\": 129.668,\n    \"eval_steps_per_second\": 16.208,\n"
            "    \"total_flos\": 1.2e+16,\n    \"train_loss\": 0.69314718,\n"
            "    \"train_runtime\": 3725.4567,\n    \"train_samples\": 80,\n"
            "    \"train_samples_per_second\": 21.333,\n    \"train_steps_per_second\": 2.667\n}");
}

TEST(ResultsFiles, MalformedAllResultsNamesTheFile) {
  fs::path dir = scratch_folder();
  std::ofstream(dir / "all_results.json") << "{\"epoch\": 1.0,";
  try {
    save_metrics(dir.string(), "eval", {{"eval_loss", 0.5}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string expected = "[" + (dir / "all_results.json").string() + "] invalid JSON: ";
    EXPECT_TRUE(std::string(e.what()).starts_with(expected)) << e.what();
  }
  // The split's own file was written before the merge failed; not combining skips the merge.
  EXPECT_EQ(read_text(dir / "eval_results.json"), "{\n    \"eval_loss\": 0.5\n}");
  save_metrics(dir.string(), "test", {{"test_loss", 0.25}}, false);
  EXPECT_EQ(read_text(dir / "all_results.json"), "{\"epoch\": 1.0,");
}

}  // namespace
}  // namespace kiln
