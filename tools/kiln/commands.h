// The `kiln` subcommands, each registered on the CLI11 app by its own file, and the reports
// that more than one of them prints.
#pragma once

#include <CLI/CLI.hpp>

#include "kiln/io/dataset.h"
#include "kiln/train/task.h"
#include "kiln/train/trainer.h"

namespace kiln::cli {

// `kiln demo`: trains a two-layer network on generated data and prints its loss curve.
void add_demo_command(CLI::App& app);
// `kiln train`: fine-tunes (or trains from scratch) a text classifier, as run_glue.py.
void add_train_command(CLI::App& app);
// `kiln evaluate`: a trained model's metrics on labelled data.
void add_evaluate_command(CLI::App& app);
// `kiln predict`: a trained model's predictions with label names and probabilities.
void add_predict_command(CLI::App& app);

// Evaluates, prints the metrics table and writes eval_results.json / all_results.json.
void report_evaluation(Trainer& trainer, const ClassificationDataset& data,
                       const TrainingArguments& args);
// qa and mlm: evaluates, prints the metrics table (mlm adds run_mlm.py's perplexity) and
// writes eval_results.json / all_results.json.
void report_task_evaluation(Trainer& trainer, const TaskData& data, const TrainingArguments& args);
// qa: predicts and writes output_dir/predictions.json (question id -> answer, as run_qa.py),
// nbest_predictions.json and, for SQuAD v2.0, null_odds.json.
void report_task_predictions(Trainer& trainer, const TaskData& data, const TrainingArguments& args);
// Predicts and writes output_dir/predict_results.txt ("index\tprediction", as run_glue.py)
// and predict_results.jsonl (label name and probabilities per example).
void report_predictions(Trainer& trainer, const ClassificationDataset& data,
                        const TrainingArguments& args);

}  // namespace kiln::cli
