// How `kiln` reports a bad command line: "kiln: error: ..." and exit code 2 (argparse's), with a
// hint for the transformers flags that Kiln has in another form.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::cli {

// Exit codes, as `kiln --help` lists them.
constexpr int kExitFailure = 1;  // the run failed (bad data, a NaN loss, a full disk, ...)
constexpr int kExitUsage = 2;    // the command line is wrong (argparse's code)

// What Kiln does instead of a transformers flag it does not have (--fp16, --deepspeed, ...), or
// nullopt. `flag` may carry its dashes and an "=value".
std::optional<std::string> transformers_flag_hint(std::string_view flag);

// Prints a CLI11 parse error of `app` (after app.parse threw it) to stderr as a usage error and
// returns kExitUsage; --help and --version print their text and return 0.
int report_parse_error(const CLI::App& app, const CLI::ParseError& error);

// Prints "kiln: error: <message>" and where to read the flags to stderr; returns kExitUsage.
int report_usage_error(const CLI::App& app, std::string_view message);

// Prints "kiln: error: <message>" to stderr.
void print_error(std::string_view message);

}  // namespace kiln::cli
