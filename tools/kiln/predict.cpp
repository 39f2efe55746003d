// `kiln predict`: a trained model's predictions on --test_file, written as run_glue.py writes
// them (predict_results.txt) and with the probabilities of every label (predict_results.jsonl).
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

void run_predict(RunOptions& options) {
  options.args.do_predict = true;
  SavedModelRun run = open_saved_model(options, "predict", {.test = true});
  report_predictions(*run.task, *run.trainer, *run.data.test, options.args);
}

}  // namespace

void report_predictions(const Task& task, Trainer& trainer, const TaskData& data,
                        const TrainingArguments& args) {
  nlohmann::json metrics = task.predict(trainer, data, args);
  if (!dist::is_main_process()) return;  // the main process writes the results
  metrics["predict_samples"] = data.size();
  std::cout << format_metrics_table("predict", metrics);
  save_metrics(args.output_dir, "predict", metrics);
}

void add_predict_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "predict",
      "Predict the labels of --test_file with a trained text classifier, or the answers to its "
      "questions with a --task qa model, or the tags of its words with a --task ner model");
  add_run_flags(*command, *options, predict_flag_names());
  command->footer(
      "Example:\n"
      "  kiln predict --model_name_or_path out/uci-sentiment \\\n"
      "    --test_file my_sentences.tsv --no_header --column_names label,source,text \\\n"
      "    --output_dir out/uci-predict\n\n" +
      std::string(kExitCodesHelp));
  command->callback([options] { run_predict(*options); });
}

}  // namespace kiln::cli
