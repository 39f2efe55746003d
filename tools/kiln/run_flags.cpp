// The flags of the run commands, their checks, and the choice of backend.
#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/error.h"
#include "kiln/train/task.h"
#include "kiln/train/training_arguments_cli.h"
#include "setup.h"

namespace kiln::cli {

void add_run_flags(CLI::App& command, RunOptions& options) {
  training_arguments_add_flags(command, options.args);
  command
      .add_flag("--no_header", options.no_header,
                "CSV/TSV files have no header line (name the columns with --column_names; "
                "else they are 0, 1, ...).")
      ->group("Model and data")
      ->default_str("False");
  command
      .add_option("--column_names", options.column_names,
                  "Names for the columns of CSV/TSV files, in order (e.g. label,source,text).")
      ->group("Model and data")
      ->delimiter(',')
      ->default_str("None");
}

void finish_arguments(TrainingArguments& args) {
  training_arguments_post_init(args);
  task_kind(args.task);  // an unknown task is an error naming the flag
  check(!args.bf16, "--bf16",
        "bf16 mixed precision is not implemented yet (it needs the compiler's mixed-precision "
        "pass); train in float32");
}

// auto picks the best backend present: the CPU backend until the CUDA and PJRT ones land.
std::unique_ptr<Backend> make_backend(const TrainingArguments& args) {
  if (args.device == "auto" || args.device == "cpu") return make_cpu_backend();
  check(args.device == "reference", "--device", "unknown device '", args.device,
        "'; the devices are: auto, cpu, reference");
  return make_reference_backend();
}

}  // namespace kiln::cli
