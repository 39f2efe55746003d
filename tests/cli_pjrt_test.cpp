// The command line on XLA devices: `kiln devices` lists the CPU plugin, `kiln train --device
// pjrt:cpu` logs the losses of `--device cpu`, and device choices that cannot be met are errors
// naming the flag. The plugin runs are skipped when no CPU plugin is found.
#include "cli_test_util.h"
#include "pjrt_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::run_kiln;

std::vector<double> logged_losses(const fs::path& output_dir) {
  std::vector<double> losses;
  std::istringstream lines(testing::read_text(output_dir / "trainer_log.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json entry = nlohmann::json::parse(line);
    if (entry.contains("loss")) losses.push_back(entry["loss"].get<double>());
  }
  return losses;
}

TEST(CliPjrt, DevicesListsThePlugin) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  testing::CommandResult listed = run_kiln("devices --pjrt_plugin " + plugin);
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find(plugin), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("platform: cpu"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("device 0: cpu"), std::string::npos) << listed.output;
  // A CPU plugin is never the automatic choice: Kiln's own CPU backend is.
  EXPECT_NE(listed.output.find("--device auto runs on: cpu"), std::string::npos) << listed.output;
}

TEST(CliPjrt, TrainingOnXlaCpuLogsTheCpuBackendsLosses) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 40, 21, {"neg", "pos"});
  std::vector<std::vector<double>> losses;
  for (std::string device : {"cpu", "pjrt:cpu"}) {
    fs::path out = dir / (device == "cpu" ? "native" : "xla");  // two runs, two folders
    testing::CommandResult trained =
        run_kiln("train " + model + " " + testing::quick_run_flags(out) + " --train_file " +
                 train.string() + " --max_steps 4 --logging_steps 1 --device " + device +
                 " --pjrt_plugin " + plugin + (device == "cpu" ? "" : " --num_devices 1"));
    ASSERT_EQ(trained.exit_code, 0) << trained.output;
    losses.push_back(logged_losses(out));
  }
  ASSERT_EQ(losses[0].size(), 4u);
  ASSERT_EQ(losses[1].size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(losses[1][i], losses[0][i], 1e-5 * losses[0][i]);
}

// The end-of-run "runtime: ..." line.
std::string runtime_line(const std::string& output) {
  size_t start = output.find("\nruntime: compiles=");
  if (start == std::string::npos) return "";
  return output.substr(start + 1, output.find('\n', start + 1) - start - 1);
}

TEST(CliPjrt, ASecondRunLoadsItsProgramsFromTheCompileCache) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 40, 21, {"neg", "pos"});
  std::vector<std::string> lines;
  std::vector<std::vector<double>> losses;
  for (const char* run : {"first", "second"}) {
    fs::path out = dir / run;
    testing::CommandResult trained =
        run_kiln("train " + model + " " + testing::quick_run_flags(out) + " --train_file " +
                 train.string() + " --max_steps 2 --logging_steps 1 --device pjrt:cpu" +
                 " --pjrt_plugin " + plugin + " --compile_cache_dir " + (dir / "cache").string());
    ASSERT_EQ(trained.exit_code, 0) << trained.output;
    lines.push_back(runtime_line(trained.output));
    losses.push_back(logged_losses(out));
    if (lines.size() == 2) {
      EXPECT_NE(trained.output.find("loaded the training step from the compile cache"),
                std::string::npos)
          << trained.output;
    }
  }
  EXPECT_EQ(lines[0].find("runtime: compiles=0 "), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(" disk_cache_hits=0 disk_cache_misses="), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].find("runtime: compiles=0 "), 0u) << lines[1];
  EXPECT_EQ(lines[1].find(" disk_cache_hits=0 "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" disk_cache_misses=0 "), std::string::npos) << lines[1];
  EXPECT_EQ(losses[1], losses[0]);
}

TEST(CliPjrt, DeviceChoicesThatCannotBeMetAreErrors) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 10, 21, {"neg", "pos"});
  std::string run = "train " + model + " " + testing::quick_run_flags(dir / "out") +
                    " --train_file " + train.string() + " --max_steps 1";
  testing::CommandResult unknown = run_kiln(run + " --device gpu0");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("[--device] 'gpu0' is not one of: auto, cpu, "
                                "reference, pjrt:cpu, pjrt:cuda, pjrt:tpu, tpu"),
            std::string::npos)
      << unknown.output;
  testing::CommandResult missing =
      run_kiln(run + " --device pjrt:cuda --pjrt_plugin " + (dir / "none.so").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("none.so: dlopen failed"), std::string::npos) << missing.output;

  std::string plugin = testing::cpu_plugin_path();
  if (plugin.empty()) return;
  testing::CommandResult wrong = run_kiln(run + " --device tpu --pjrt_plugin " + plugin);
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.output.find("drives 'cpu', not tpu"), std::string::npos) << wrong.output;
}

}  // namespace
}  // namespace kiln
