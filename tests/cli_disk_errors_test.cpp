// A full disk and a read-only output_dir: `kiln train` ends with exit code 1 and an error naming
// the path and the system's reason, and the checkpoints already written stay intact and load.
// Both use a private mount namespace (`unshare`, as root or through an unprivileged user
// namespace): a small tmpfs for the full disk, a read-only bind mount for the output folder
// (root ignores permission bits, so chmod would not do). Where mounting is impossible the tests
// are skipped with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include "process_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::checkpoint_problem;

// The script run as root in a private mount namespace; its output goes to `log`.
int run_in_mount_namespace(const std::string& script, const fs::path& log) {
  const std::string unshare = geteuid() == 0 ? "unshare -m" : "unshare -rm";
  testing::write_text(log.string() + ".sh", script);
  return std::system((unshare + " sh -e " + log.string() + ".sh > " + log.string() + " 2>&1")
                         .c_str());
}

// Empty when a tmpfs can be mounted in a private mount namespace here, else why not.
std::string mount_unavailable(const fs::path& dir) {
  fs::create_directories(dir / "probe");
  if (run_in_mount_namespace("mount -t tmpfs -o size=64k tmpfs " + (dir / "probe").string() + "\n",
                             dir / "probe.log") == 0) {
    return "";
  }
  return "cannot mount in a private mount namespace (needs root or unprivileged user "
         "namespaces): " +
         testing::read_text(dir / "probe.log");
}

std::string train_flags(const fs::path& dir, const fs::path& output_dir) {
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 24, 2);
  return "train " + model + " --train_file " + train.string() + " " +
         testing::quick_run_flags(output_dir) + " --save_steps 1 --report_to none --logging_dir " +
         (dir / "runs").string();
}

// Every checkpoint-N folder of `out` loads; returns the highest step.
int64_t expect_checkpoints_load(const fs::path& out) {
  int64_t latest = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(out)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with("tmp-checkpoint-"))
        << "a failed save left " << entry.path();
    if (std::optional<int64_t> step = checkpoint_step(entry.path())) {
      EXPECT_EQ(checkpoint_problem(entry.path()), "");
      latest = std::max(latest, *step);
    }
  }
  return latest;
}

TEST(CliDiskErrors, FullDiskFailsACheckpointCleanlyAndKeepsTheEarlierOnes) {
  fs::path dir = testing::scratch_folder();
  if (std::string why = mount_unavailable(dir); !why.empty()) GTEST_SKIP() << why;
  const fs::path disk = dir / "disk", copy = dir / "copy", log = dir / "run.log";
  fs::create_directories(disk);
  const std::string flags = train_flags(dir, disk / "out");
  // A checkpoint of the tiny model takes about 50 KB of tmpfs pages: a few fit in 200 KB.
  const std::string script = "mount -t tmpfs -o size=200k tmpfs " + disk.string() +
                             "\nset +e\n" + KILN_BINARY + " " + flags + " --max_steps 100\n" +
                             "echo \"kiln exit code $?\"\ncp -a " + (disk / "out").string() + " " +
                             copy.string() + "\n";
  ASSERT_EQ(run_in_mount_namespace(script, log), 0) << testing::read_text(log);
  const std::string output = testing::read_text(log);
  EXPECT_NE(output.find("kiln exit code 1"), std::string::npos) << output;
  EXPECT_NE(output.find("kiln: error: [" + (disk / "out").string() + "/checkpoint-"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("No space left on device"), std::string::npos) << output;

  const int64_t latest = expect_checkpoints_load(copy);
  ASSERT_GE(latest, 1) << output;
  // The last checkpoint is good enough to continue from.
  testing::CommandResult resumed = testing::run_kiln(
      train_flags(dir, copy) + " --max_steps " + std::to_string(latest + 1) +
      " --resume_from_checkpoint " + checkpoint_path(copy, latest).string());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
}

TEST(CliDiskErrors, ReadOnlyOutputDirIsReportedBeforeTrainingAndKeepsTheCheckpoint) {
  fs::path dir = testing::scratch_folder();
  if (std::string why = mount_unavailable(dir); !why.empty()) GTEST_SKIP() << why;
  const fs::path out = dir / "out", log = dir / "run.log";
  const std::string flags = train_flags(dir, out);
  testing::CommandResult first = testing::run_kiln(flags + " --max_steps 2");
  ASSERT_EQ(first.exit_code, 0) << first.output;

  const std::string script = "mount --bind " + out.string() + " " + out.string() +
                             "\nmount -o remount,bind,ro " + out.string() + "\nset +e\n" +
                             KILN_BINARY + " " + flags + " --max_steps 4\n" +
                             "echo \"kiln exit code $?\"\n";
  ASSERT_EQ(run_in_mount_namespace(script, log), 0) << testing::read_text(log);
  const std::string output = testing::read_text(log);
  EXPECT_NE(output.find("kiln exit code 1"), std::string::npos) << output;
  EXPECT_NE(output.find("kiln: error: [" + out.string() +
                        "] cannot write into the output folder: Read-only file system"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("***** Running training *****"), std::string::npos)
      << "the check comes before any training: " << output;
  EXPECT_EQ(expect_checkpoints_load(out), 2);
}

}  // namespace
}  // namespace kiln
