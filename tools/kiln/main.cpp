// The kiln command line: parses the subcommand and turns errors into an exit code and a message.
#include <exception>
#include <iostream>

#include "commands.h"
#include "help_format.h"
#include "kiln/ir/usage_error.h"
#include "usage_errors.h"

int main(int argc, char** argv) {
  kiln::cli::remember_command_line(argc, argv);
  CLI::App app{"Kiln: compiled transformer training"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print this help with every command's flags and exit");
  app.set_version_flag("--version", kiln::cli::version_text, "Print the version, the backends "
                       "compiled in and the PJRT plugins found, and exit");
  kiln::cli::use_help_format(app);
  app.footer("Run `kiln COMMAND --help` for the flags of one command and their defaults.\n\n" +
             std::string(kiln::cli::kExitCodesHelp));
  kiln::cli::add_train_command(app);
  kiln::cli::add_evaluate_command(app);
  kiln::cli::add_predict_command(app);
  kiln::cli::add_generate_command(app);
  kiln::cli::add_demo_command(app);
  kiln::cli::add_bench_command(app);
  kiln::cli::add_devices_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return kiln::cli::report_parse_error(app, error);
  } catch (const kiln::cli::ExitWith& request) {
    return request.code;
  } catch (const kiln::UsageError& error) {
    return kiln::cli::report_usage_error(app, error.what());
  } catch (const std::exception& error) {
    // Library code throws kiln::Error; anything else (a filesystem or allocation failure) is
    // still reported, not a crash.
    kiln::cli::print_error(error.what());
    return kiln::cli::kExitFailure;
  }
  return 0;
}
