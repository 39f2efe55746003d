// `kiln predict`: a trained model's predictions on --test_file, written as run_glue.py writes
// them (predict_results.txt) and with the probabilities of every label (predict_results.jsonl).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "help_format.h"
#include "kiln/dist/communicator.h"
#include "kiln/io/atomic_file.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/results_files.h"
#include "kiln/train/trainer_metrics.h"
#include "setup.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

void run_predict(RunOptions& options) {
  options.args.do_predict = true;
  SavedModelRun run = open_saved_model(options, "predict", false, true);
  if (run.task_data.test) {
    report_task_predictions(*run.trainer, *run.task_data.test, options.args);
  } else {
    report_predictions(*run.trainer, *run.data.test, options.args);
  }
}

}  // namespace

void report_predictions(Trainer& trainer, const ClassificationDataset& data,
                        const TrainingArguments& args) {
  PredictionOutput out = trainer.predict(data);
  if (!dist::is_main_process()) return;  // the main process writes the results
  const std::vector<std::string>& names = trainer.config().id2label;
  std::ostringstream text, jsonl;
  text << "index\tprediction\n";
  for (size_t i = 0; i < data.size(); ++i) {
    nlohmann::json line = {{"index", i}};
    if (!out.label_sets.empty()) {
      // run_classification.py writes the label list as Python prints it: ['a', 'b'].
      const auto labels = static_cast<size_t>(out.num_labels);
      std::vector<std::string> chosen;
      for (int32_t id : out.label_sets[i]) chosen.push_back(names[static_cast<size_t>(id)]);
      text << i << "\t[";
      for (size_t k = 0; k < chosen.size(); ++k) text << (k ? ", '" : "'") << chosen[k] << "'";
      text << "]\n";
      line["prediction"] = chosen;
      line["label_ids"] = out.label_sets[i];
      nlohmann::json by_name = nlohmann::json::object();
      for (size_t c = 0; c < labels; ++c) {
        by_name[names[c]] = 1.0 / (1.0 + std::exp(-out.logits[i * labels + c]));
      }
      line["probabilities"] = by_name;
    } else if (out.classes.empty()) {
      char value[32];
      std::snprintf(value, sizeof value, "%3.3f", out.values[i]);
      text << i << '\t' << value << '\n';
      line["prediction"] = out.values[i];
    } else {
      const auto labels = static_cast<size_t>(out.num_labels);
      std::vector<double> probabilities = softmax_rows(
          std::span<const double>(out.logits).subspan(i * labels, labels), out.num_labels);
      const std::string& name = names[static_cast<size_t>(out.classes[i])];
      text << i << '\t' << name << '\n';
      line["prediction"] = name;
      line["label_id"] = out.classes[i];
      nlohmann::json by_name = nlohmann::json::object();
      for (size_t c = 0; c < labels; ++c) by_name[names[c]] = probabilities[c];
      line["probabilities"] = by_name;
    }
    jsonl << line.dump() << '\n';
  }
  fs::create_directories(args.output_dir);
  const fs::path folder = args.output_dir;
  write_file_atomically((folder / "predict_results.txt").string(), text.str());
  write_file_atomically((folder / "predict_results.jsonl").string(), jsonl.str());
  std::cerr << "wrote " << data.size() << " predictions to "
            << (folder / "predict_results.txt").string() << " and predict_results.jsonl\n";
  out.metrics["predict_samples"] = data.size();
  std::cout << format_metrics_table("predict", out.metrics);
  save_metrics(args.output_dir, "predict", out.metrics);
}

void add_predict_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "predict",
      "Predict the labels of --test_file with a trained text classifier, or the answers to its "
      "questions with a --task qa model");
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
