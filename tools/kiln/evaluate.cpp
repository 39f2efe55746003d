// `kiln evaluate`: a trained model's loss and metrics on --validation_file (or on the held-out
// split of --train_file), saved as eval_results.json.
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "help_format.h"
#include "kiln/dist/communicator.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/results_files.h"
#include "setup.h"

namespace kiln::cli {
namespace {

void run_evaluate(RunOptions& options) {
  options.args.do_eval = true;
  SavedModelRun run = open_saved_model(options, "evaluate", {.eval = true});
  report_evaluation(*run.task, *run.trainer, *run.data.eval, options.args);
}

}  // namespace

void report_evaluation(const Task& task, Trainer& trainer, const TaskData& data,
                       const TrainingArguments& args) {
  nlohmann::json metrics = task.evaluate(trainer, data, args);
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
                         "Evaluate a trained model (--task classification, qa, mlm or ner) on "
                         "labelled data");
  add_run_flags(*command, *options, evaluate_flag_names());
  command->footer(
      "Example (the held-out split of the README's main job):\n"
      "  kiln evaluate --model_name_or_path out/uci-sentiment \\\n"
      "    --train_file data/classification/uci-sentiment.tsv --no_header \\\n"
      "    --column_names label,source,text --validation_split_percentage 10 \\\n"
      "    --max_seq_length 64 --output_dir out/uci-eval\n\n" +
      std::string(kExitCodesHelp));
  command->callback([options] { run_evaluate(*options); });
}

}  // namespace kiln::cli
