// `kiln train`: the main job of run_glue.py, run_qa.py, run_mlm.py or run_clm.py (--task): train
// (resuming a checkpoint when there is one), save the model and the train metrics, then evaluate
// and predict when asked.
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "help_format.h"
#include "kiln/dist/communicator.h"
#include "kiln/tasks/registry.h"
#include "kiln/train/checkpoint.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/results_files.h"
#include "kiln/train/stop_signal.h"
#include "setup.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

// The model, the train metrics and the trainer state, as run_*.py save them after training.
void finish_training(Trainer& trainer, const nlohmann::json& metrics, const TrainingArguments& args) {
  if (!dist::is_main_process()) return;  // the main process writes the results
  trainer.save_model(args.output_dir);
  std::cout << format_metrics_table("train", metrics);
  save_metrics(args.output_dir, "train", metrics);
  trainer_state_save(trainer.state(), (fs::path(args.output_dir) / "trainer_state.json").string());
}

// A run that a signal stopped after saving its checkpoint ends here, as a shell reports a process
// its signal ended: 128 + the signal number.
void stop_if_interrupted(const Trainer& trainer, const TrainingArguments& args) {
  const int signal_number = trainer.stopped_by_signal();
  if (signal_number == 0) return;
  if (dist::is_main_process()) {
    std::cerr << "Training was interrupted. To resume from the checkpoint it saved, run:\n  "
              << resume_command(
                     checkpoint_path(args.output_dir, trainer.state().global_step).string())
              << '\n';
  }
  throw ExitWith{128 + signal_number};
}

void run_train(RunOptions& options) {
  TrainingArguments& args = options.args;
  args.do_train = true;
  finish_arguments(args, /*task_of_the_model=*/false);
  std::unique_ptr<Backend> backend = make_backend(args);
  std::optional<fs::path> resume = checkpoint_to_resume(args);
  if (resume && !args.resume_from_checkpoint && dist::is_main_process()) {
    std::cerr << "Checkpoint detected, resuming training at " << resume->string()
              << ". To avoid this behavior, change the `--output_dir` or add "
                 "`--overwrite_output_dir` to train from scratch.\n";
  }
  const Task& task = find_task(*args.task);
  ModelSetup model = load_model_config(args, task);
  TaskSplits data = task.load_data(options, *model.tokenizer, *model.config,
                                   {true, args.do_eval, args.do_predict}, std::cerr);
  load_model_weights(model, task, args, std::cerr);
  std::unique_ptr<Trainer> trainer = make_trainer(args, model, *backend);
  install_stop_signal_handlers();
  nlohmann::json metrics = trainer->train(*data.train, data.eval.get(), resume);
  stop_if_interrupted(*trainer, args);
  metrics["train_samples"] = data.train->size();
  finish_training(*trainer, metrics, args);
  if (args.do_eval) report_evaluation(task, *trainer, *data.eval, args);
  if (args.do_predict) report_predictions(task, *trainer, *data.test, args);
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "train",
      "Train a text classifier (--task classification, as run_glue.py), an extractive question "
      "answering model (--task qa, run_qa.py), a masked language model (--task mlm, "
      "run_mlm.py), a token classifier (--task ner, run_ner.py) or a causal language model "
      "(--task clm, run_clm.py)");
  add_run_flags(*command, *options);
  command->footer(
      "Example (the README's main job):\n"
      "  kiln train --config_name tiny \\\n"
      "    --tokenizer_name data/vocab/bert-base-uncased-vocab.txt \\\n"
      "    --train_file data/classification/uci-sentiment.tsv --no_header \\\n"
      "    --column_names label,source,text --validation_split_percentage 10 \\\n"
      "    --do_eval --max_seq_length 64 --per_device_train_batch_size 32 \\\n"
      "    --learning_rate 1e-3 --num_train_epochs 2 --output_dir out/uci-sentiment\n\n" +
      std::string(kExitCodesHelp));
  command->callback([options] { run_train(*options); });
}

}  // namespace kiln::cli
