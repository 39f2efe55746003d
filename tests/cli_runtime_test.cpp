// The runtime seen from `kiln train`: the counters at every logging step with --debug metrics,
// the one-line summary at the end of every run, and --debug's bad values.
#include <gtest/gtest.h>

#include "cli_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::run_kiln;

int64_t occurrences(const std::string& text, const std::string& part) {
  int64_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// 40 examples in batches of 8: 5 steps, logged at steps 2 and 4.
std::string train_command(const fs::path& dir, const std::string& extra) {
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 40, 21, {"neg", "pos"});
  return "train " + model + " " + testing::quick_run_flags(dir / "out") + " --train_file " +
         train.string() +
         " --validation_split_percentage 0 --num_train_epochs 1 --logging_steps 2"
         " --save_strategy no --overwrite_output_dir " +
         extra;
}

TEST(CliRuntime, DebugMetricsLogsTheCountersAtEveryLoggingStep) {
  fs::path dir = testing::scratch_folder();
  testing::CommandResult run = run_kiln(train_command(dir, "--debug metrics"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(occurrences(run.output, "runtime metrics: compiles="), 2) << run.output;
  EXPECT_EQ(occurrences(run.output, "\nruntime: compiles="), 1) << run.output;
  // Every later step of a shape is a cache hit.
  EXPECT_EQ(occurrences(run.output, "cache_hits=0 "), 0) << run.output;
}

TEST(CliRuntime, EveryRunEndsWithTheRuntimeSummary) {
  fs::path dir = testing::scratch_folder();
  testing::CommandResult run = run_kiln(train_command(dir, ""));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(occurrences(run.output, "runtime metrics:"), 0);
  size_t summary = run.output.find("\nruntime: compiles=");
  ASSERT_NE(summary, std::string::npos) << run.output;
  for (const char* counter : {"cache_hits=", "compile_ms=", "runs=", "execute_ms=",
                              "host_to_device=", "device_to_host=", "arena_bytes=", "kernels=",
                              "compiled_loops="}) {
    EXPECT_NE(run.output.find(counter, summary), std::string::npos) << counter;
  }
}

TEST(CliRuntime, UnknownDebugOptionsAreErrors) {
  fs::path dir = testing::scratch_folder();
  testing::CommandResult run = run_kiln(train_command(dir, "--debug underflow_overflow"));
  EXPECT_EQ(run.exit_code, 2);  // a usage error
  EXPECT_NE(run.output.find(
                "[--debug] 'underflow_overflow' is not a debug option; the options are: metrics"),
            std::string::npos)
      << run.output;
}

}  // namespace
}  // namespace kiln
