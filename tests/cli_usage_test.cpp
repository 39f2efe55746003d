// The command line's manners: exit code 2 and "kiln: error:" for every kind of usage error (a
// failed run's 1 is cli_errors_test's), hints for transformers flags Kiln lacks, --help
// (choices, wrapping, examples, exit codes, only the flags a command reads), --version, progress
// lines in a log file, and the validation split held out only for runs that evaluate.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cli_test_util.h"
#include "kiln/train/training_arguments_fields.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::run_kiln;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every line of `text` that is longer than `width`.
std::vector<std::string> lines_over(const std::string& text, size_t width) {
  std::vector<std::string> long_lines;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > width) long_lines.push_back(line);
  }
  return long_lines;
}

void expect_usage_error(const std::string& arguments, const std::string& message) {
  testing::CommandResult result = run_kiln(arguments);
  EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
  EXPECT_TRUE(result.output.starts_with("kiln: error: ")) << arguments << "\n" << result.output;
  EXPECT_TRUE(contains(result.output, message)) << arguments << "\n" << result.output;
}

TEST(CliUsage, EveryKindOfUsageErrorExitsWithTwo) {
  // Unknown command, no command, unknown flag (with and without a value).
  expect_usage_error("trian", "unknown command 'trian'; the commands are: train, evaluate");
  expect_usage_error("", "a command is required; the commands are: train");
  expect_usage_error("train --no_such_flag", "unrecognized arguments: --no_such_flag");
  // The value of an unknown flag is not taken for the positional JSON file of arguments.
  testing::CommandResult with_value = run_kiln("train --no_such_flag 3");
  EXPECT_TRUE(contains(with_value.output, "unrecognized arguments: --no_such_flag"))
      << with_value.output;
  EXPECT_FALSE(contains(with_value.output, "args_file")) << with_value.output;
  EXPECT_EQ(with_value.exit_code, 2);
  // Bad values: a number, a choice of an enum field and of a text field, a range, a combination.
  expect_usage_error("train --learning_rate fast",
                     "[--learning_rate] expected a number, got 'fast'");
  expect_usage_error("train --lr_scheduler_type steep",
                     "[--lr_scheduler_type] 'steep' is not one of: linear, cosine");
  expect_usage_error("evaluate --device tpu0",
                     "[--device] 'tpu0' is not one of: auto, cpu, reference, pjrt:cpu");
  expect_usage_error("train --task question_answering",
                     "[--task] 'question_answering' is not one of: classification, qa, mlm, ner");
  expect_usage_error("train --report_to wandb", "[--report_to] 'wandb' is not one of: none");
  expect_usage_error("train --config_name tiny --lr_scheduler_kwargs '{\"power\": 2}'",
                     "[--lr_scheduler_kwargs] key 'power': the linear scheduler takes no arguments");
  expect_usage_error("train --per_device_train_batch_size 0",
                     "[--per_device_train_batch_size] must be positive");
  expect_usage_error("train --load_best_model_at_end --eval_strategy epoch",
                     "[--load_best_model_at_end] requires the save and eval strategy to match");
  // Missing arguments: the model, the training file, the model of `kiln evaluate`.
  expect_usage_error("train", "[--model_name_or_path] give a model");
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  expect_usage_error("train " + model + " --output_dir " + (dir / "out").string(),
                     "[--train_file] training needs --train_file");
  expect_usage_error("evaluate --validation_file x.tsv",
                     "[--model_name_or_path] kiln evaluate needs a trained model folder");
}

TEST(CliUsage, TransformersFlagsKilnLacksSayWhatToUseInstead) {
  expect_usage_error("train --fp16", "--fp16 (a transformers flag): Kiln has no fp16 mixed "
                                     "precision; use --bf16");
  for (const char* flag : {"--deepspeed ds_config.json", "--fsdp full_shard"}) {
    expect_usage_error(std::string("train ") + flag, "it trains data parallel: --num_devices N");
    expect_usage_error(std::string("train ") + flag, "mpirun -np N kiln train");
  }
  expect_usage_error("train --push_to_hub", "huggingface-cli upload");
  // Both flags are named, each with its own line.
  testing::CommandResult both = run_kiln("train --fp16 --hub_model_id me/model");
  EXPECT_TRUE(contains(both.output, "kiln: error: --fp16 (a transformers flag)")) << both.output;
  EXPECT_TRUE(contains(both.output, "kiln: error: --hub_model_id (a transformers flag)"))
      << both.output;
}

TEST(CliUsage, HelpListsTheChoicesOfEveryFieldThatHasThem) {
  testing::CommandResult help = run_kiln("train --help");
  ASSERT_EQ(help.exit_code, 0) << help.output;
  for (const char* name :
       {"task", "device", "nan_inf_strategy", "report_to", "lr_scheduler_type", "optim"}) {
    const ArgumentField* field = find_training_argument_field(name);
    ASSERT_NE(field, nullptr) << name;
    EXPECT_FALSE(argument_choices(*field).empty()) << name;
  }
  for (const ArgumentField& field : training_argument_fields()) {
    std::vector<std::string_view> choices = argument_choices(field);
    if (choices.empty()) continue;
    std::string listed = "--" + std::string(field.name) + " {";
    for (size_t i = 0; i < choices.size(); ++i) listed += (i ? "," : "") + std::string(choices[i]);
    // The choices are a word the help may break after a comma: compare without line breaks.
    std::string flat = std::regex_replace(help.output, std::regex(",\n *"), ",");
    EXPECT_TRUE(contains(flat, listed + "}")) << listed << "\n" << help.output;
    // Each listed choice passes the check of choices (the run then stops at what is missing).
    for (std::string_view choice : choices) {
      testing::CommandResult parsed =
          run_kiln("train --" + std::string(field.name) + " " + std::string(choice));
      EXPECT_FALSE(contains(parsed.output, "is not one of")) << field.name << " " << choice
                                                             << "\n" << parsed.output;
    }
  }
}

TEST(CliUsage, HelpIsWrappedAtTheTerminalWidthWithExamplesAndExitCodes) {
  // The compile cache's default is a path under the user's cache folder: one word that cannot
  // wrap, as long as the folder's name. A short one keeps the check about the wrapping.
  const std::string kiln = "XDG_CACHE_HOME=/c " + std::string(KILN_BINARY) + " ";
  for (const char* command : {"train", "evaluate", "predict", "demo", "bench", "devices"}) {
    // Not a terminal: 80 columns; COLUMNS (as argparse reads it) overrides.
    testing::CommandResult plain = testing::run_command(kiln + command + " --help");
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    EXPECT_EQ(lines_over(plain.output, 80), std::vector<std::string>{}) << command;
    EXPECT_TRUE(contains(plain.output, "Example")) << command;
    // The example commands keep their lines (written for 80 columns) at any width.
    testing::CommandResult narrow =
        testing::run_command("COLUMNS=60 " + kiln + command + " --help");
    const std::string body = narrow.output.substr(0, narrow.output.find("\nExample"));
    EXPECT_EQ(lines_over(body, 60), std::vector<std::string>{}) << command;
  }
  for (const char* command : {"--help", "train --help", "evaluate --help", "predict --help"}) {
    testing::CommandResult help = run_kiln(command);
    std::string flat = std::regex_replace(help.output, std::regex("\n"), " ");
    EXPECT_TRUE(contains(flat, "1 the run failed; 2 a usage error")) << command;
    EXPECT_TRUE(contains(flat, "130 or 143 stopped by SIGINT (Ctrl-C) or SIGTERM")) << command;
  }
}

TEST(CliUsage, EvaluateAndPredictListOnlyTheFlagsTheyRead) {
  testing::CommandResult evaluate = run_kiln("evaluate --help");
  testing::CommandResult predict = run_kiln("predict --help");
  for (const char* flag : {"--model_name_or_path", "--per_device_eval_batch_size", "--device",
                           "--max_seq_length", "--output_dir", "--bf16", "--column_names"}) {
    EXPECT_TRUE(contains(evaluate.output, flag)) << flag;
    EXPECT_TRUE(contains(predict.output, flag)) << flag;
  }
  for (const char* flag : {"--validation_file", "--validation_split_percentage",
                           "--max_eval_samples"}) {
    EXPECT_TRUE(contains(evaluate.output, flag)) << flag;
    EXPECT_FALSE(contains(predict.output, flag)) << flag;
  }
  for (const char* flag : {"--test_file", "--max_predict_samples"}) {
    EXPECT_FALSE(contains(evaluate.output, flag)) << flag;
    EXPECT_TRUE(contains(predict.output, flag)) << flag;
  }
  for (const char* flag : {"--learning_rate", "--num_train_epochs", "--save_steps",
                           "--per_device_train_batch_size", "--eval_strategy", "--warmup_ratio"}) {
    EXPECT_FALSE(contains(evaluate.output, flag)) << flag;
    EXPECT_FALSE(contains(predict.output, flag)) << flag;
  }
  // Still accepted, as HF's scripts accept every flag: the run stops at the missing model.
  testing::CommandResult accepted = run_kiln("evaluate --learning_rate 0.1");
  EXPECT_TRUE(contains(accepted.output, "needs a trained model folder")) << accepted.output;
}

TEST(CliUsage, VersionNamesTheBackendsAndThePluginFound) {
  fs::path dir = testing::scratch_folder();
  fs::path plugin = dir / "pjrt_c_api_cpu_plugin.so";
  testing::write_text(plugin, "");  // discovery lists a file; `kiln devices` opens it
  testing::CommandResult version = testing::run_command(
      "PJRT_NAMES_AND_LIBRARY_PATHS=cpu:" + plugin.string() + " " + KILN_BINARY + " --version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_TRUE(std::regex_search(version.output, std::regex("^kiln [0-9]+\\.[0-9]+\\.[0-9]+\n")))
      << version.output;
  EXPECT_TRUE(contains(version.output, "backends: cpu (oneDNN), reference, pjrt"))
      << version.output;
  EXPECT_TRUE(contains(version.output, "PJRT plugin: cpu " + plugin.string() +
                                           " (found by PJRT_NAMES_AND_LIBRARY_PATHS (cpu))"))
      << version.output;
}

// A run whose output is a file (not a terminal) shows each compile with its reason and a line per
// evaluation and prediction; --disable_tqdm leaves the bars out.
TEST(CliUsage, ProgressLinesInALogFile) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 40, 31, {"neg", "pos"});
  fs::path test = testing::write_sentiment_tsv(dir / "test.tsv", 12, 32, {"neg", "pos"});
  std::string flags = model + " --output_dir " + (dir / "out").string() +
                      " --no_header --column_names label,source,text --max_seq_length 16"
                      " --per_device_train_batch_size 8 --per_device_eval_batch_size 4"
                      " --num_train_epochs 1 --train_file " + train.string() +
                      " --validation_split_percentage 20 --eval_strategy epoch"
                      " --do_predict --test_file " + test.string();
  testing::CommandResult run = run_kiln("train " + flags);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "compiling the training step for input_ids i32(8,16)"))
      << run.output;
  EXPECT_TRUE(contains(run.output, "compiling the forward pass for input_ids i32(4,16)"))
      << run.output;
  // 8 held-out rows in batches of 4; 12 test rows in batches of 4. 32 training rows: 4 steps.
  EXPECT_TRUE(contains(run.output, "evaluating batch 2/2 (100%)")) << run.output;
  EXPECT_TRUE(contains(run.output, "predicting batch 3/3 (100%)")) << run.output;
  EXPECT_TRUE(contains(run.output, "step 4/4 (100%)")) << run.output;
  testing::CommandResult quiet =
      run_kiln("train " + flags + " --overwrite_output_dir --disable_tqdm");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_FALSE(contains(quiet.output, "evaluating batch")) << quiet.output;
  EXPECT_FALSE(contains(quiet.output, "step 4/4")) << quiet.output;
}

nlohmann::json all_results(const fs::path& out) {
  return nlohmann::json::parse(testing::read_text(out / "all_results.json"));
}

// Without --do_eval (or an evaluation strategy) training uses every row; with it, 10% of the 40
// rows are held out, and the log says so and how to change it.
TEST(CliUsage, ValidationSplitOnlyForRunsThatEvaluate) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 40, 33, {"neg", "pos"});
  std::string flags = model + " " + testing::quick_run_flags(dir / "out") + " --train_file " +
                      train.string() + " --validation_split_percentage 10 --num_train_epochs 1";
  testing::CommandResult whole = run_kiln("train " + flags);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_FALSE(contains(whole.output, "holding out")) << whole.output;
  EXPECT_EQ(all_results(dir / "out")["train_samples"], 40);

  testing::CommandResult held_out =
      run_kiln("train " + flags + " --do_eval --overwrite_output_dir");
  ASSERT_EQ(held_out.exit_code, 0) << held_out.output;
  EXPECT_TRUE(contains(held_out.output,
                       "validation: holding out 4 of the 40 rows of " + train.string() +
                           " for evaluation (--validation_split_percentage 10); give "
                           "--validation_file FILE to evaluate on another file, or change the "
                           "percentage"))
      << held_out.output;
  nlohmann::json results = all_results(dir / "out");
  EXPECT_EQ(results["train_samples"], 36);
  EXPECT_EQ(results["eval_samples"], 4);
}

}  // namespace
}  // namespace kiln
