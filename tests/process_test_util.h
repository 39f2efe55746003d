// Shared by the command-line tests that signal `kiln` while it runs: a child process (kiln
// itself, or a shell command such as mpirun's) started with its output in a file, signalled,
// polled and waited for; the latest checkpoint of a run; and the check that a checkpoint folder
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
#include "kiln/models/model_family.h"
#include "kiln/train/checkpoint.h"
#include "kiln/train/lr_schedule.h"

namespace kiln::testing {

// A child process, waited for (and killed first if still running) at destruction.
class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess() {
    if (pid_ > 0 && !ended()) {
      kill(own_group_ ? -pid_ : pid_, SIGKILL);
      wait();
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

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

 protected:
  pid_t pid_ = -1;
  bool own_group_ = false;  // the process leads a group of its own, killed with it

 private:
  bool waited_ = false;
  int status_ = -1;
};

class KilnProcess : public ChildProcess {
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
};

// A shell command (mpirun and the processes it starts) in a process group of its own, its
// output appended to `log`.
class ShellProcess : public ChildProcess {
 public:
  ShellProcess(const std::string& command, const fs::path& log) {
    own_group_ = true;
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      // As from a terminal: a test started in the background inherits SIGINT ignored.
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid_, pid_);
  }
  // `signal_number` to the processes of the group named `name` (the launcher, "mpirun").
  void signal_named(const std::string& name, int signal_number) const {
    std::error_code error;
    for (fs::directory_iterator it("/proc", error), end; !error && it != end;
         it.increment(error)) {
      const std::string number = it->path().filename().string();
      if (number.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(number);
      if (getpgid(pid) == pid_ && read_text(it->path() / "comm") == name + "\n") {
        kill(pid, signal_number);
      }
    }
  }
};

// Polls every millisecond until `ready` holds, the process ends or two minutes pass; true when
// `ready` held.
template <typename Ready>
bool wait_until(ChildProcess& process, Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (!ready()) {
    if (process.ended() || std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The highest step among the complete checkpoints in `out`, or 0.
inline int64_t latest_step(const fs::path& out) {
  std::optional<fs::path> latest = latest_checkpoint(out);
  return latest ? *checkpoint_step(*latest) : 0;
}

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
    TrainingArguments args;
    training_arguments_load_json(args, (folder / "training_args.json").string());
    OptimizerState optimizer = optimizer_state_read((folder / "optimizer.safetensors").string());
    optimizer_state_check(optimizer, weights, optimizer_kind(args.optim),
                          *make_optimizer(optimizer_config(args)), folder.string());
    LrScheduleState scheduler = lr_schedule_read_state((folder / "scheduler.json").string());
    rng_state_read((folder / "rng_state.json").string());
    model_config_read((folder / "config.json").string());
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
