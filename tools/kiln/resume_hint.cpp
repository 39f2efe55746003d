// The command that resumes an interrupted run: this process's own command line (under mpirun as
// many processes as it has) with --resume_from_checkpoint pointing at the checkpoint it saved.
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "kiln/dist/communicator.h"

namespace kiln::cli {
namespace {

std::vector<std::string>& command_line() {
  static std::vector<std::string> words;
  return words;
}

// The word as a POSIX shell reads it back: bare when it is made of safe characters only.
std::string shell_quoted(const std::string& word) {
  constexpr std::string_view kSafe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%";
  if (!word.empty() && word.find_first_not_of(kSafe) == std::string::npos) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void remember_command_line(int argc, char** argv) {
  command_line().assign(argv, argv + argc);
}

std::string resume_command(const std::string& checkpoint) {
  constexpr std::string_view kFlag = "--resume_from_checkpoint";
  const std::vector<std::string>& words = command_line();
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == kFlag) {
      ++i;  // and its value
      continue;
    }
    if (words[i].starts_with(std::string(kFlag) + "=")) continue;
    out += (out.empty() ? "" : " ") + shell_quoted(words[i]);
  }
  // Every process of a distributed run resumes, as they were started.
  if (dist::world().size() > 1) out = "mpirun -np " + std::to_string(dist::world().size()) + " " + out;
  return out + " " + std::string(kFlag) + " " + shell_quoted(checkpoint);
}

}  // namespace kiln::cli
