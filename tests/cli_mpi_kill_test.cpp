// The promises of a run in two processes: a process killed with SIGKILL ends the other with an
// error naming the lost rank, well within a minute, and the same command then resumes from the
// last complete checkpoint to the weights of a run never killed, bit for bit; SIGTERM to one
// process, or Ctrl-C to mpirun (which passes SIGTERM on to every process), stops both after the
// same step with one checkpoint, from which the run resumes alike.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "cli_test_util.h"
#include "mpi_test_util.h"
#include "process_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::latest_step;
using testing::ShellProcess;

constexpr int64_t kSteps = 18;  // 48 examples, 8 a step, 3 epochs
// The whole run takes a fraction of a second: each checkpoint write of the interrupted runs is
// widened by the test hook of checkpoint.h, so that the run is still going when signalled.
const std::string kSlowCheckpoints = "KILN_TEST_CHECKPOINT_PAUSE_MS=300 ";

// A tiny model with dropout, clipping and warm-up, a checkpoint every 2 steps.
std::string run_command(const fs::path& dir) {
  const std::string model = testing::write_tiny_model_files(dir / "model", /*dropout=*/0.1);
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 48, 11);
  return testing::mpirun(2) + " " + KILN_BINARY + " train " + model + " --train_file " + train.string() + " --output_dir " + (dir / "out").string() +
         " --no_header --column_names label,source,text --max_seq_length 16"
         " --validation_split_percentage 0 --per_device_train_batch_size 4"
         " --num_train_epochs 3 --learning_rate 1e-2 --warmup_steps 2 --weight_decay 0.01"
         " --max_grad_norm 0.5 --save_steps 2 --logging_steps 1 --report_to none"
         " --disable_tqdm --seed 5 --device cpu";
}

// The uninterrupted run's final weights; the folder is then emptied for the interrupted one.
TensorMap straight_run(const std::string& command, const fs::path& dir) {
  testing::CommandResult straight = testing::run_command(command);
  EXPECT_EQ(straight.exit_code, 0) << straight.output;
  TensorMap weights = testing::read_weights(dir / "out" / "model.safetensors");
  fs::remove_all(dir / "out");
  return weights;
}

// The same command run again resumes from the latest checkpoint and ends as `straight` did.
void expect_resumes_to(const std::string& command, const fs::path& dir, const TensorMap& straight) {
  testing::CommandResult resumed = testing::run_command(command);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming training at"), std::string::npos) << resumed.output;
  EXPECT_EQ(testing::weights_difference(
                testing::read_weights(dir / "out" / "model.safetensors"), straight),
            "");
}

TEST(CliMpiKill, SigkillOfOneProcessEndsTheOtherAndTheRunResumesExactly) {
  KILN_REQUIRE_MPIRUN();
  fs::path dir = testing::scratch_folder();
  const std::string command = run_command(dir);
  const TensorMap straight = straight_run(command, dir);

  std::random_device device;
  const unsigned seed = device();
  SCOPED_TRACE("kill step drawn with seed " + std::to_string(seed));
  const int64_t kill_after = 2 + 2 * static_cast<int64_t>(std::mt19937(seed)() % 6);  // 2..12
  const fs::path log = dir / "killed.log";
  ShellProcess run(kSlowCheckpoints + command, log);
  ASSERT_TRUE(testing::wait_until(run, [&] { return latest_step(dir / "out") >= kill_after; }))
      << testing::read_text(log);
  const pid_t victim = testing::kiln_rank_pid(1, (dir / "out").string());
  ASSERT_GT(victim, 0);
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(!testing::wait_until(run, [] { return false; }) && run.ended());
  const int status = run.wait();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_LT(seconds, 60.0);
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << testing::status_str(status);
  const std::string output = testing::read_text(log);
  EXPECT_NE(output.find("rank 1"), std::string::npos) << output;
  EXPECT_LT(latest_step(dir / "out"), kSteps);
  expect_resumes_to(command, dir, straight);
}

// Signals `run` once it has saved checkpoint-4: SIGTERM to rank 1 (`to_mpirun` false) or SIGINT
// to mpirun itself; then checks the one checkpoint both processes stopped at and resumes from it.
void expect_stop_and_resume(bool to_mpirun) {
  fs::path dir = testing::scratch_folder();
  const std::string command = run_command(dir);
  const TensorMap straight = straight_run(command, dir);

  const fs::path log = dir / "stopped.log";
  ShellProcess run(kSlowCheckpoints + command, log);
  ASSERT_TRUE(testing::wait_until(run, [&] { return latest_step(dir / "out") >= 4; }))
      << testing::read_text(log);
  if (to_mpirun) {
    run.signal_named("mpirun", SIGINT);
  } else {
    const pid_t rank1 = testing::kiln_rank_pid(1, (dir / "out").string());
    ASSERT_GT(rank1, 0);
    ASSERT_EQ(kill(rank1, SIGTERM), 0);
  }
  const int status = run.wait();
  const std::string output = testing::read_text(log);
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  // Both processes stopped after the step that the checkpoint holds.
  const int64_t stopped = latest_step(dir / "out");
  ASSERT_LT(stopped, kSteps) << output;
  EXPECT_EQ(testing::checkpoint_problem(checkpoint_path(dir / "out", stopped)), "");
  EXPECT_NE(output.find("Training stopped by SIGTERM after step " + std::to_string(stopped)),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("mpirun -np 2 "), std::string::npos) << output;  // the resume hint
  expect_resumes_to(command, dir, straight);
}

TEST(CliMpiKill, SigtermToOneProcessStopsBothAfterOneStepWithOneCheckpoint) {
  KILN_REQUIRE_MPIRUN();
  expect_stop_and_resume(false);
}

TEST(CliMpiKill, CtrlCToMpirunStopsBothAfterOneStepWithOneCheckpoint) {
  KILN_REQUIRE_MPIRUN();
  expect_stop_and_resume(true);
}

}  // namespace
}  // namespace kiln
