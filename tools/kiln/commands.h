// The `kiln` subcommands, each registered on the CLI11 app by its own file.
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::cli {

// `kiln demo`: trains a two-layer network on generated data and prints its loss curve.
void add_demo_command(CLI::App& app);

}  // namespace kiln::cli
