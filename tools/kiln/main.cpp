// The kiln command line: parses the subcommand and turns errors into an exit code and a message.
#include <iostream>

#include "commands.h"
#include "kiln/ir/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Kiln: compiled transformer training"};
  app.require_subcommand(1);
  kiln::cli::add_demo_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const kiln::Error& error) {
    std::cerr << "kiln: error: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
