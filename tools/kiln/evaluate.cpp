// `kiln evaluate`: a trained model's loss and metrics on --validation_file (or on the held-out
// split of --train_file), saved as eval_results.json.
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "kiln/dist/communicator.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/results_files.h"
#include "setup.h"

namespace kiln::cli {
namespace {

void run_evaluate(RunOptions& options) {
  options.args.do_eval = true;
  SavedModelRun run = open_saved_model(options, "evaluate", true, false);
  if (run.task_data.eval) {
    report_task_evaluation(*run.trainer, *run.task_data.eval, options.args);
  } else {
    report_evaluation(*run.trainer, *run.data.eval, options.args);
  }
}

}  // namespace

void report_evaluation(Trainer& trainer, const ClassificationDataset& data,
                       const TrainingArguments& args) {
  nlohmann::json metrics = trainer.evaluate(data, "eval");
  if (!dist::is_main_process()) return;  // the main process writes the results
  metrics["eval_samples"] = data.size();
  std::cout << format_metrics_table("eval", metrics);
  std::filesystem::create_directories(args.output_dir);
  save_metrics(args.output_dir, "eval", metrics);
}

void add_evaluate_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command =
      app.add_subcommand("evaluate",
                         "Evaluate a trained model (--task classification, qa or mlm) on "
                         "labelled data");
  add_run_flags(*command, *options);
  command->callback([options] { run_evaluate(*options); });
}

}  // namespace kiln::cli
