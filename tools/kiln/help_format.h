// `kiln --help` laid out for the reader's terminal: every line wrapped at its width (80 when the
// output is not a terminal), the help of a flag indented under a column, and the exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cli {

constexpr std::string_view kExitCodesHelp =
    "Exit status: 0 done; 1 the run failed; 2 a usage error (an unknown flag or value, a missing "
    "argument); 130 or 143 stopped by SIGINT (Ctrl-C) or SIGTERM after saving a checkpoint.";

// The width help is wrapped at: $COLUMNS, else the terminal's on stdout, else 80.
size_t help_width();

// `text` in lines of at most `width` characters, broken at spaces and after commas (a word longer
// than the width stays whole). Line breaks in `text` are kept, and lines that start with a space
// (example commands) are kept as they are.
std::vector<std::string> wrap_text(std::string_view text, size_t width);

// Makes `app` (and the commands added to it afterwards) print wrapped help.
void use_help_format(CLI::App& app);

}  // namespace kiln::cli
