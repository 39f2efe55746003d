// Shared by the command-line tests that signal `kiln` while it runs: a child process started
// with its output in a file, signalled, and waited for; and the check that a checkpoint folder
// loads completely and consistently, as a resumed run would read it.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "cli_test_util.h"
#include "kiln/io/bert_config.h"
#include "kiln/train/checkpoint.h"
#include "kiln/train/lr_schedule.h"

namespace kiln::testing {

class KilnProcess {
 public:
  // Starts KILN_BINARY with `arguments` (split at spaces), stdout and stderr appended to `log`,
  // and `environment` ("NAME=value") added to this process's environment.
  KilnProcess(const std::string& arguments, const fs::path& log,
              const std::vector<std::string>& environment = {}) {
    std::vector<std::string> words = {KILN_BINARY};
    std::istringstream split(arguments);
    for (std::string word; split >> word;) words.push_back(word);
    std::vector<char*> argv, envp;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    for (char** entry = environ; *entry != nullptr; ++entry) envp.push_back(*entry);
    for (const std::string& entry : environment) envp.push_back(const_cast<char*>(entry.c_str()));
    envp.push_back(nullptr);
    // Only async-signal-safe calls between fork and exec (the test process has threads).
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
  }
  ~KilnProcess() {
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      wait();
    }
  }
  KilnProcess(const KilnProcess&) = delete;
  KilnProcess& operator=(const KilnProcess&) = delete;

  void signal(int signal_number) const { kill(pid_, signal_number); }
  // True (and status() set) once the process has ended.
  bool ended() {
    if (!waited_ && waitpid(pid_, &status_, WNOHANG) == pid_) waited_ = true;
    return waited_;
  }
  int wait() {
    if (!waited_ && waitpid(pid_, &status_, 0) == pid_) waited_ = true;
    return status_;
  }
  int status() const { return status_; }

 private:
  pid_t pid_ = -1;
  bool waited_ = false;
  int status_ = -1;
};

// "exit code N" or "signal N", for messages about a wait status.
inline std::string status_str(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// Empty when `folder` is a complete checkpoint that loads as Trainer's resume reads it (model,
// optimizer, scheduler, RNG position, trainer state, arguments, config, tokenizer) with every
// step count equal to the one in its name; else what is wrong.
inline std::string checkpoint_problem(const fs::path& folder) {
  try {
    std::optional<int64_t> step = checkpoint_step(folder);
    if (!step) return folder.string() + " is not named checkpoint-N";
    if (!is_complete_checkpoint(folder)) return folder.string() + " has no trainer_state.json";
    TrainerState state = trainer_state_load((folder / "trainer_state.json").string());
    TensorMap weights = read_weights(folder / "model.safetensors");
    AdamWState optimizer = optimizer_state_read((folder / "optimizer.safetensors").string());
    optimizer_state_check(optimizer, weights, folder.string());
    LrScheduleState scheduler = lr_schedule_read_state((folder / "scheduler.json").string());
    rng_state_read((folder / "rng_state.json").string());
    TrainingArguments args;
    training_arguments_load_json(args, (folder / "training_args.json").string());
    bert_config_read((folder / "config.json").string());
    tokenizer_load(folder.string());
    if (state.global_step != *step || optimizer.step != *step || scheduler.last_epoch != *step) {
      return folder.string() + ": steps disagree (trainer_state " +
             std::to_string(state.global_step) + ", optimizer " + std::to_string(optimizer.step) +
             ", scheduler " + std::to_string(scheduler.last_epoch) + ")";
    }
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

}  // namespace kiln::testing
