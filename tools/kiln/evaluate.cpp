// `kiln evaluate`: a trained model's loss and metrics on --validation_file (or on the held-out
// split of --train_file), saved as eval_results.json.
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "kiln/ir/error.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/results_files.h"
#include "setup.h"

namespace kiln::cli {
namespace {

void run_evaluate(RunOptions& options) {
  TrainingArguments& args = options.args;
  args.do_eval = true;
  finish_arguments(args);
  std::unique_ptr<Backend> backend = make_backend(args);
  check(args.model_name_or_path.has_value(), "--model_name_or_path",
        "kiln evaluate needs a trained model folder");
  ModelSetup model = load_model_config(args);
  RunData data = load_run_data(options, model.config, false, true, false, std::cerr);
  load_model_weights(model, args, std::cerr);
  Trainer trainer(args, model.config, std::move(model.weights), std::move(*model.tokenizer),
                  *backend, std::cerr);
  report_evaluation(trainer, *data.eval, args);
}

}  // namespace

void report_evaluation(Trainer& trainer, const ClassificationDataset& data,
                       const TrainingArguments& args) {
  nlohmann::json metrics = trainer.evaluate(data, "eval");
  metrics["eval_samples"] = data.size();
  std::cout << format_metrics_table("eval", metrics);
  std::filesystem::create_directories(args.output_dir);
  save_metrics(args.output_dir, "eval", metrics);
}

void add_evaluate_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command =
      app.add_subcommand("evaluate", "Evaluate a trained text classifier on labelled data");
  add_run_flags(*command, *options);
  command->callback([options] { run_evaluate(*options); });
}

}  // namespace kiln::cli
