// Shared by the tests that run processes under OpenMPI's mpirun (installed by
// scripts/setup.sh): the launcher's command line, the skip (a failure in CI) where it is
// missing, a launched job to signal, and its processes by rank.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "shell_test_util.h"
#include "support/testing.h"

namespace kiln::testing {

// Whether mpirun is on the PATH.
inline bool have_mpirun() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

// Skips the test without mpirun, except in CI (CI=true), which installs it.
#define KILN_REQUIRE_MPIRUN()                                                              \
  do {                                                                                     \
    if (!::kiln::testing::have_mpirun()) {                                                 \
      const char* ci = std::getenv("CI");                                                  \
      if (ci != nullptr && std::string(ci) == "true") FAIL() << "mpirun is not installed"; \
      GTEST_SKIP() << "mpirun not found (scripts/setup.sh installs openmpi-bin)";          \
    }                                                                                      \
  } while (false)

// `mpirun -np N` with one kernel thread per process; root may run it, and N may exceed the
// cores. Under the sanitizers (scripts/sanitize.sh) the leaks of OpenMPI's own libraries are
// suppressed, which takes whole stacks (fast_unwind_on_malloc=0): they keep no frame pointers.
inline std::string mpirun(int processes) {
  return "ASAN_OPTIONS=\"$ASAN_OPTIONS:fast_unwind_on_malloc=0\" LSAN_OPTIONS=suppressions=" +
         std::string(KILN_SOURCE_DIR) +
         "/tests/mpi/openmpi_leaks.supp mpirun --allow-run-as-root --oversubscribe --bind-to none"
         " -x OMP_NUM_THREADS=1 -np " + std::to_string(processes);
}

}  // namespace kiln::testing

namespace kiln::testing {

// A shell command run in its own process group (mpirun and the processes it starts), its output
// appended to `log`; killed with the group if still running at destruction.
class ShellProcess {
 public:
  ShellProcess(const std::string& command, const std::filesystem::path& log) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      // As from a terminal: a test started in the background inherits SIGINT ignored.
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid_, pid_);
  }
  ~ShellProcess() {
    if (!ended()) {
      kill(-pid_, SIGKILL);
      wait();
    }
  }
  ShellProcess(const ShellProcess&) = delete;
  ShellProcess& operator=(const ShellProcess&) = delete;

  // `signal_number` to the launcher: the mpirun of this process group.
  void signal_launcher(int signal_number) const {
    std::error_code error;
    for (std::filesystem::directory_iterator it("/proc", error), end; !error && it != end;
         it.increment(error)) {
      const std::string name = it->path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(name);
      if (getpgid(pid) == pid_ && read_text(it->path() / "comm").starts_with("mpirun")) {
        kill(pid, signal_number);
      }
    }
  }
  bool ended() {
    if (!waited_ && waitpid(pid_, &status_, WNOHANG) == pid_) waited_ = true;
    return waited_;
  }
  int wait() {
    if (!waited_ && waitpid(pid_, &status_, 0) == pid_) waited_ = true;
    return status_;
  }

 private:
  pid_t pid_ = -1;
  bool waited_ = false;
  int status_ = -1;
};

// The pid of the kiln process of rank `rank` whose command line mentions `marker` (its output
// folder), or -1 while there is none.
inline pid_t kiln_rank_pid(int rank, const std::string& marker) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  std::error_code error;
  for (std::filesystem::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string command = read_text(it->path() / "cmdline");
    std::string environment = read_text(it->path() / "environ");
    if (command.find(marker) == std::string::npos || command.find("mpirun") != std::string::npos) {
      continue;
    }
    for (size_t at = 0; at < environment.size();) {
      size_t next = environment.find('\0', at);
      if (environment.compare(at, next - at, wanted) == 0) return std::stoi(name);
      at = next == std::string::npos ? environment.size() : next + 1;
    }
  }
  return -1;
}

}  // namespace kiln::testing
