// The kiln command line: parses the subcommand and turns errors into an exit code and a message.
#include <exception>
#include <iostream>

#include "commands.h"
#include "kiln/ir/error.h"

int main(int argc, char** argv) {
  kiln::cli::remember_command_line(argc, argv);
  CLI::App app{"Kiln: compiled transformer training"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print this help with every command's flags and exit");
  app.footer("Run `kiln COMMAND --help` for the flags of one command and their defaults.");
  kiln::cli::add_train_command(app);
  kiln::cli::add_evaluate_command(app);
  kiln::cli::add_predict_command(app);
  kiln::cli::add_demo_command(app);
  kiln::cli::add_bench_command(app);
  kiln::cli::add_devices_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const kiln::cli::ExitWith& request) {
    return request.code;
  } catch (const kiln::Error& error) {
    std::cerr << "kiln: error: " << error.what() << '\n';
    return 1;
  } catch (const std::exception& error) {
    // Library code throws kiln::Error; anything else (a filesystem or allocation failure) is
    // still reported, not a crash.
    std::cerr << "kiln: error: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
