// Shared by the tests that run commands: a shell command's exit code, output and duration.
#pragma once

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace kiln::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
  double seconds = 0.0;
};

inline CommandResult run_command(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  while (size_t read = fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, read);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kiln::testing
