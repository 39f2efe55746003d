// Shared by the tests that run processes under OpenMPI's mpirun (installed by
// scripts/setup.sh): the launcher's command line, the skip (a failure in CI) where it is
// missing, and a job's processes by rank.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "shell_test_util.h"
#include "support/testing.h"

namespace kiln::testing {

// Whether mpirun is on the PATH.
inline bool have_mpirun() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

// Skips the test without mpirun, except in CI, which installs it (scripts/setup.sh).
#define KILN_REQUIRE_MPIRUN()                  \
  KILN_SKIP_UNLESS(::kiln::testing::have_mpirun(), \
                   "mpirun not found (scripts/setup.sh installs openmpi-bin)")

// `mpirun -np N` with one kernel thread per process; root may run it, and N may exceed the
// cores. Under the sanitizers (scripts/sanitize.sh) the processes it starts check no leaks:
// OpenMPI's libraries keep allocations until exit, which LeakSanitizer can only tell apart by
// unwinding whole stacks at every allocation (their code keeps no frame pointers), 15 times
// slower; the single-process tests check the same Kiln code for leaks.
inline std::string mpirun(int processes) {
  return "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" mpirun --allow-run-as-root --oversubscribe"
         " --bind-to none -x OMP_NUM_THREADS=1 -np " + std::to_string(processes);
}

}  // namespace kiln::testing

namespace kiln::testing {

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
