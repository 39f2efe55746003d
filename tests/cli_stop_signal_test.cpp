// SIGINT and SIGTERM during `kiln train`, for every task: the current step finishes, a checkpoint
// of it is saved, and kiln exits with 128 + the signal number after printing the command that
// resumes (the same command line with --resume_from_checkpoint), which then continues the run.
#include <gtest/gtest.h>

#include "process_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::KilnProcess;
using testing::status_str;

// How each logged step starts on the console (Python's json.dumps of the logs).
const std::string kLossLine = "{\"epoch\": ";

// The task's data flags on generated files in `dir`.
std::string task_flags(const std::string& task, const fs::path& dir) {
  if (task == "qa") {
    return "--task qa --version_2_with_negative --train_file " +
           testing::write_questions(dir).string() + " --max_seq_length 16 --doc_stride 4";
  }
  if (task == "mlm") {
    return "--task mlm --train_file " + testing::write_text_corpus(dir).string() +
           " --max_seq_length 8";
  }
  if (task == "ner") {
    return "--task ner --train_file " KILN_SOURCE_DIR "/data/ner/austen-ner-train.jsonl"
           " --max_train_samples 64 --max_seq_length 16";
  }
  if (task == "clm") {
    return "--task clm --train_file " + testing::write_text_corpus(dir).string() +
           " --block_size 8";
  }
  return "--train_file " + testing::write_sentiment_tsv(dir / "train.tsv", 24, 2).string() +
         " --no_header --column_names label,source,text --max_seq_length 16";
}

// The task's model: tiny BERT files in `dir`, or clm's tiny GPT-2 (tests/data/clm).
std::string model_flags(const std::string& task, const fs::path& dir) {
  if (task != "clm") return testing::write_tiny_model_files(dir / "model");
  const fs::path source(KILN_SOURCE_DIR);
  return "--model_name_or_path " + (source / "tests/data/clm/tiny_gpt2").string() +
         " --tokenizer_name " + (source / "data/tokenizers/austen-bpe-1k").string();
}

// A run far longer than the test waits: it only ends by the signal.
std::string long_run_flags(const std::string& task, const fs::path& dir) {
  std::string model = model_flags(task, dir);
  return "train " + model + " " + task_flags(task, dir) + " --output_dir " +
         (dir / "out").string() +
         " --per_device_train_batch_size 4 --learning_rate 1e-2 --disable_tqdm --seed 3"
         " --max_steps 1000000 --save_steps 1000000 --logging_steps 1 --report_to none"
         " --logging_dir " +
         (dir / "runs").string();
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

void expect_graceful_stop(const std::string& task, int signal_number) {
  fs::path dir = testing::scratch_folder();
  const std::string flags = long_run_flags(task, dir);
  const fs::path log = dir / "train.log";
  KilnProcess run(flags, log);
  // A few logged steps, so that the signal arrives in the middle of training.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (count_of(testing::read_text(log), kLossLine) < 3) {
    ASSERT_FALSE(run.ended()) << status_str(run.status()) << ": " << testing::read_text(log);
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << testing::read_text(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run.signal(signal_number);
  int status = run.wait();
  const std::string output = testing::read_text(log);
  ASSERT_TRUE(WIFEXITED(status)) << status_str(status) << ": " << output;
  EXPECT_EQ(WEXITSTATUS(status), 128 + signal_number) << output;

  // "To resume ..., run:" and the same command line with --resume_from_checkpoint.
  const std::string prefix = std::string(KILN_BINARY) + " " + flags + " --resume_from_checkpoint ";
  const std::string intro = "To resume from the checkpoint it saved, run:\n  ";
  const size_t hint = output.find(intro);
  ASSERT_NE(hint, std::string::npos) << output;
  const size_t start = hint + intro.size();
  const std::string command = output.substr(start, output.find('\n', start) - start);
  ASSERT_TRUE(command.starts_with(prefix)) << command;
  const fs::path checkpoint = command.substr(prefix.size());
  std::optional<int64_t> step = checkpoint_step(checkpoint);
  ASSERT_TRUE(step.has_value()) << command;
  EXPECT_EQ(checkpoint.parent_path(), dir / "out");
  EXPECT_GE(*step, 3);
  EXPECT_EQ(testing::checkpoint_problem(checkpoint), "");
  // Every logged step is in the checkpoint: the one in progress finished before the save.
  TrainerState state = trainer_state_load((checkpoint / "trainer_state.json").string());
  EXPECT_EQ(static_cast<int64_t>(count_of(output, kLossLine)), *step) << output;
  EXPECT_EQ(static_cast<int64_t>(state.log_history.size()), *step);

  // The hint's command continues from there (with two more steps, so that it ends).
  testing::CommandResult resumed =
      testing::run_kiln(command.substr(std::string(KILN_BINARY).size() + 1) + " --max_steps " +
                        std::to_string(*step + 2));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("Continuing training from checkpoint " + checkpoint.string()),
            std::string::npos)
      << resumed.output;
  EXPECT_EQ(trainer_state_load((dir / "out" / "trainer_state.json").string()).global_step,
            *step + 2);
}

struct StopCase {
  std::string task;
  int signal_number;
};

std::string signal_name(int signal_number) {
  return signal_number == SIGINT ? "SIGINT" : "SIGTERM";
}

void PrintTo(const StopCase& stop, std::ostream* out) {
  *out << stop.task << ' ' << signal_name(stop.signal_number);
}

class CliStopSignal : public ::testing::TestWithParam<StopCase> {};

TEST_P(CliStopSignal, SavesACheckpointAndPrintsHowToResume) {
  expect_graceful_stop(GetParam().task, GetParam().signal_number);
}

INSTANTIATE_TEST_SUITE_P(
    EveryTask, CliStopSignal,
    ::testing::Values(StopCase{"classification", SIGINT}, StopCase{"classification", SIGTERM},
                      StopCase{"qa", SIGINT}, StopCase{"mlm", SIGINT},
                      StopCase{"ner", SIGINT}, StopCase{"clm", SIGINT}),
    [](const ::testing::TestParamInfo<StopCase>& info) {
      return info.param.task + "_" + signal_name(info.param.signal_number);
    });

}  // namespace
}  // namespace kiln
