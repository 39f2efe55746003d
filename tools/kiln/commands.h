// The `kiln` subcommands, each registered on the CLI11 app by its own file, and the reports
// that more than one of them prints.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "kiln/tasks/task.h"
#include "kiln/train/trainer.h"

namespace kiln::cli {

// `kiln devices`: the backends and PJRT plugins found, and what --device auto picks.
void add_devices_command(CLI::App& app);
// `kiln demo`: trains a two-layer network on generated data and prints its loss curve.
void add_demo_command(CLI::App& app);
// `kiln train`: fine-tunes (or trains from scratch) a text classifier, as run_glue.py.
void add_train_command(CLI::App& app);
// `kiln evaluate`: a trained model's metrics on labelled data.
void add_evaluate_command(CLI::App& app);
// `kiln predict`: a trained model's predictions with label names and probabilities.
void add_predict_command(CLI::App& app);
// `kiln generate`: a GPT-2 model's continuation of a prompt, as generate() computes it.
void add_generate_command(CLI::App& app);
// `kiln bench`: synthetic BERT training steps, timed; one JSON line comparable with
// ../shared/bench/peer/bert_torch.py.
void add_bench_command(CLI::App& app);

// The task's evaluation of `data`: prints the metrics table and writes eval_results.json /
// all_results.json.
void report_evaluation(const Task& task, Trainer& trainer, const TaskData& data,
                       const TrainingArguments& args);
// The task's predictions for `data` (its files in output_dir): prints the metrics table and
// writes predict_results.json / all_results.json.
void report_predictions(const Task& task, Trainer& trainer, const TaskData& data,
                        const TrainingArguments& args);

// `kiln --version`: the version, the backends compiled in and the PJRT plugins found.
std::string version_text();

// Thrown by a command to end `kiln` with this exit code after it has reported why.
struct ExitWith {
  int code;
};

// The command line of this process (main keeps it), for hints that repeat it.
void remember_command_line(int argc, char** argv);
// That command line, shell-quoted, with `--resume_from_checkpoint checkpoint` in place of any
// --resume_from_checkpoint it had.
std::string resume_command(const std::string& checkpoint);

}  // namespace kiln::cli
