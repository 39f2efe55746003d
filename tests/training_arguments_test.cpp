// TrainingArguments: Hugging Face defaults, post-init derivations and errors, command-line
// parsing (bool forms, lists, ratios, JSON file plus overrides), JSON files and their errors.
#include "kiln/train/training_arguments.h"
#include "support/testing.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/ir/error.h"
#include "kiln/train/training_arguments_cli.h"
#include "kiln/train/training_arguments_fields.h"

namespace kiln {
namespace {

using testing::scratch_folder;

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// The message of the kiln::Error that `body` throws ("" when it throws none).
template <typename Body>
std::string error_of(Body body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

std::string post_init_error(TrainingArguments args) {
  return error_of([&] { training_arguments_post_init(args); });
}

// Parses a command line into fresh arguments (post-init not applied).
TrainingArguments parse(std::vector<std::string> words) {
  TrainingArguments args;
  CLI::App app("test");
  training_arguments_add_flags(app, args);
  std::reverse(words.begin(), words.end());  // CLI11 takes the arguments back to front
  app.parse(words);
  return args;
}

// The message of the CLI11 error a command line raises.
std::string parse_error(std::vector<std::string> words) {
  try {
    parse(std::move(words));
  } catch (const CLI::ParseError& error) {
    return error.what();
  }
  return "";
}

// Values from transformers.TrainingArguments (4.57.6 dataclass defaults; overwrite_output_dir and
// warmup_ratio are 4.x fields) and run_glue.py's max_seq_length.
TEST(TrainingArgumentsTest, DefaultsAreHuggingFaces) {
  TrainingArguments args;
  EXPECT_EQ(args.output_dir, "trainer_output");
  EXPECT_FALSE(args.overwrite_output_dir);
  EXPECT_FALSE(args.do_train);
  EXPECT_FALSE(args.do_eval);
  EXPECT_FALSE(args.do_predict);
  EXPECT_EQ(args.per_device_train_batch_size, 8);
  EXPECT_EQ(args.per_device_eval_batch_size, 8);
  EXPECT_EQ(args.gradient_accumulation_steps, 1);
  EXPECT_EQ(args.learning_rate, 5e-5);
  EXPECT_EQ(args.weight_decay, 0.0);
  EXPECT_EQ(args.adam_beta1, 0.9);
  EXPECT_EQ(args.adam_beta2, 0.999);
  EXPECT_EQ(args.adam_epsilon, 1e-8);
  EXPECT_EQ(args.max_grad_norm, 1.0);
  EXPECT_EQ(args.num_train_epochs, 3.0);
  EXPECT_EQ(args.max_steps, -1);
  EXPECT_EQ(args.lr_scheduler_type, LrSchedulerType::linear);
  EXPECT_EQ(args.warmup_ratio, 0.0);
  EXPECT_EQ(args.warmup_steps, 0.0);
  EXPECT_EQ(args.logging_strategy, IntervalStrategy::steps);
  EXPECT_EQ(args.logging_steps, 500);
  EXPECT_FALSE(args.logging_first_step);
  EXPECT_EQ(args.eval_strategy, IntervalStrategy::no);
  EXPECT_FALSE(args.eval_on_start);
  EXPECT_FALSE(args.eval_steps.has_value());
  EXPECT_EQ(args.save_strategy, SaveStrategy::steps);
  EXPECT_EQ(args.save_steps, 500);
  EXPECT_FALSE(args.save_total_limit.has_value());
  EXPECT_FALSE(args.load_best_model_at_end);
  EXPECT_FALSE(args.metric_for_best_model.has_value());
  EXPECT_FALSE(args.greater_is_better.has_value());
  EXPECT_EQ(args.seed, 42);
  EXPECT_FALSE(args.data_seed.has_value());
  EXPECT_FALSE(args.bf16);
  EXPECT_FALSE(args.resume_from_checkpoint.has_value());
  EXPECT_FALSE(args.dataloader_drop_last);
  EXPECT_FALSE(args.disable_tqdm);
  EXPECT_FALSE(args.max_seq_length.has_value());  // the task's default (below)
  // Kiln's choices where HF has none or differs (see training_arguments.h).
  EXPECT_EQ(args.report_to, std::vector<std::string>{"jsonl"});
  EXPECT_FALSE(args.pad_to_max_length);
  EXPECT_FALSE(args.task.has_value());  // the model's task (classification for a new one)
  EXPECT_EQ(args.device, "auto");
  EXPECT_FALSE(args.early_stopping_patience.has_value());
  EXPECT_EQ(args.early_stopping_threshold, 0.0);  // EarlyStoppingCallback's default
  EXPECT_EQ(args.validation_split_percentage, 5);  // run_mlm.py's default
}

TEST(TrainingArgumentsTest, PostInitOfDefaultsDerivesOnlyTheLogFolder) {
  TrainingArguments args;
  args.output_dir = "out";
  training_arguments_post_init(args);
  EXPECT_FALSE(args.do_eval);
  EXPECT_FALSE(args.eval_steps.has_value());
  EXPECT_FALSE(args.metric_for_best_model.has_value());
  EXPECT_FALSE(args.greater_is_better.has_value());
  EXPECT_EQ(args.report_to, std::vector<std::string>{"jsonl"});
  EXPECT_TRUE(args.logging_dir.starts_with("out/runs/")) << args.logging_dir;
}

// run_qa.py defaults to 384 tokens, whose doc_stride of 128 the default of 128 would not fit;
// run_glue.py and the others to 128. A length the user gives stays.
TEST(TrainingArgumentsTest, PostInitSetsTheTasksDefaultSequenceLength) {
  auto resolved = [](std::optional<std::string> task, std::optional<int64_t> given) {
    TrainingArguments args;
    args.task = std::move(task);
    args.max_seq_length = given;
    training_arguments_post_init(args);
    return args.max_seq_length;
  };
  EXPECT_EQ(resolved("qa", std::nullopt), 384);
  EXPECT_EQ(resolved("classification", std::nullopt), 128);
  EXPECT_EQ(resolved(std::nullopt, std::nullopt), 128);
  EXPECT_EQ(resolved("ner", std::nullopt), 128);
  EXPECT_EQ(resolved("qa", 200), 200);
  EXPECT_EQ(resolved("classification", 64), 64);
  TrainingArguments short_qa;
  short_qa.task = "qa";
  short_qa.max_seq_length = 128;
  EXPECT_EQ(post_init_error(short_qa), "[--doc_stride] must lie in [0, max_seq_length): 128");
}

TEST(TrainingArgumentsTest, PostInitDerivesEvalAndBestModelSettings) {
  TrainingArguments args;
  args.eval_strategy = IntervalStrategy::steps;
  args.logging_steps = 0.05;
  args.save_steps = 0.1;
  args.load_best_model_at_end = true;
  training_arguments_post_init(args);
  // As transformers 5.24 gives for the same arguments: eval_steps 0.05, "loss", False, do_eval.
  EXPECT_TRUE(args.do_eval);
  EXPECT_EQ(args.eval_steps, 0.05);
  EXPECT_EQ(args.metric_for_best_model, "loss");
  EXPECT_EQ(args.greater_is_better, false);

  TrainingArguments accuracy;
  accuracy.metric_for_best_model = "accuracy";
  training_arguments_post_init(accuracy);
  EXPECT_EQ(accuracy.greater_is_better, true);

  TrainingArguments eval_loss;
  eval_loss.metric_for_best_model = "eval_loss";
  eval_loss.greater_is_better = true;  // given explicitly: kept
  training_arguments_post_init(eval_loss);
  EXPECT_EQ(eval_loss.greater_is_better, true);
}

TEST(TrainingArgumentsTest, PostInitNormalizesReportTo) {
  TrainingArguments args;
  args.report_to = {"all"};
  training_arguments_post_init(args);
  EXPECT_EQ(args.report_to, (std::vector<std::string>{"jsonl", "tensorboard"}));
  args.report_to = {"none"};
  training_arguments_post_init(args);
  EXPECT_TRUE(args.report_to.empty());
  args.report_to = {"tensorboard", "jsonl", "tensorboard"};
  training_arguments_post_init(args);
  EXPECT_EQ(args.report_to, (std::vector<std::string>{"tensorboard", "jsonl"}));

  args.report_to = {"wandb"};
  EXPECT_EQ(post_init_error(args),
            "[--report_to] 'wandb' is not one of: none, jsonl, tensorboard, all");
  args.report_to = {"none", "jsonl"};
  EXPECT_EQ(post_init_error(args), "[--report_to] 'none' cannot be combined with other values");
}

// HF splits --debug at spaces; Kiln's one option is "metrics", and anything else is an error.
TEST(TrainingArgumentsTest, PostInitSplitsAndChecksDebug) {
  TrainingArguments args;
  training_arguments_post_init(args);
  EXPECT_TRUE(args.debug.empty());
  args.debug = {"metrics metrics", ""};  // "" is HF's default
  training_arguments_post_init(args);
  EXPECT_EQ(args.debug, std::vector<std::string>{"metrics"});
  args.debug = {"metrics", "tpu_metrics_debug"};
  EXPECT_EQ(post_init_error(args),
            "[--debug] 'tpu_metrics_debug' is not a debug option; the options are: metrics");
  args.debug = {"metrics verbose"};
  EXPECT_EQ(post_init_error(args),
            "[--debug] 'verbose' is not a debug option; the options are: metrics");
  EXPECT_EQ(parse({"--debug", "metrics"}).debug, std::vector<std::string>{"metrics"});
}

// The texts are HF's, with the flag in front (checked against transformers 5.24's messages).
TEST(TrainingArgumentsTest, PostInitRejectsWhatHuggingFaceRejects) {
  TrainingArguments args;
  args.eval_strategy = IntervalStrategy::steps;
  args.save_strategy = SaveStrategy::epoch;
  args.load_best_model_at_end = true;
  EXPECT_EQ(post_init_error(args),
            "[--load_best_model_at_end] requires the save and eval strategy to match, except when "
            "--save_strategy=\"best\", but found\n"
            "- Evaluation strategy: steps\n- Save strategy: epoch");

  args.save_strategy = SaveStrategy::steps;
  args.eval_steps = 30;
  args.save_steps = 100;
  EXPECT_EQ(post_init_error(args),
            "[--load_best_model_at_end] requires the saving steps to be a round multiple of the "
            "evaluation steps, but found 100, which is not a round multiple of 30.");
  args.eval_steps = 0.1;
  EXPECT_EQ(post_init_error(args),
            "[--load_best_model_at_end] requires the saving steps to be a multiple of the "
            "evaluation steps, which cannot get guaranteed when mixing ratio and absolute steps "
            "for save_steps 100 and eval_steps 0.1.");
  args.eval_steps = 0.3;
  args.save_steps = 0.5;
  EXPECT_EQ(post_init_error(args),
            "[--load_best_model_at_end] requires the saving steps to be a multiple of the "
            "evaluation steps, but found 0.5, which is not a multiple of 0.3.");
  args.eval_steps = 0.1;
  args.save_steps = 0.3;  // 0.3 % 0.1 != 0 in floating point, yet a multiple
  EXPECT_EQ(post_init_error(args), "");
  args.eval_steps = 50;
  args.save_steps = 200;
  EXPECT_EQ(post_init_error(args), "");

  TrainingArguments logging;
  logging.logging_steps = 2.5;
  EXPECT_EQ(post_init_error(logging), "[--logging_steps] must be an integer if bigger than 1: 2.5");
  logging.eval_strategy = IntervalStrategy::steps;
  logging.logging_steps = 0;
  EXPECT_EQ(post_init_error(logging),
            "[--eval_steps] evaluation strategy steps requires either non-zero --eval_steps or "
            "--logging_steps");
  logging.eval_strategy = IntervalStrategy::no;
  EXPECT_EQ(post_init_error(logging),
            "[--logging_steps] logging strategy steps requires non-zero --logging_steps");

  TrainingArguments warmup;
  warmup.warmup_ratio = 1.5;
  EXPECT_EQ(post_init_error(warmup), "[--warmup_ratio] warmup_ratio must lie in range [0,1]");
  warmup.warmup_ratio = 0;
  warmup.warmup_steps = 2.5;
  EXPECT_EQ(post_init_error(warmup), "[--warmup_steps] must be an integer if bigger than 1: 2.5");
}

TEST(TrainingArgumentsTest, PostInitRejectsImpossibleValues) {
  auto with = [](auto change) {
    TrainingArguments args;
    change(args);
    return post_init_error(args);
  };
  EXPECT_EQ(with([](auto& a) { a.per_device_train_batch_size = 0; }),
            "[--per_device_train_batch_size] must be positive: 0");
  EXPECT_EQ(with([](auto& a) { a.gradient_accumulation_steps = -2; }),
            "[--gradient_accumulation_steps] must be positive: -2");
  EXPECT_EQ(with([](auto& a) { a.adam_beta1 = 1.0; }),
            "[--adam_beta1] Invalid beta parameter at index 0: 1");
  EXPECT_EQ(with([](auto& a) { a.learning_rate = -1e-3; }),
            "[--learning_rate] Invalid learning rate: -0.001");
  EXPECT_EQ(with([](auto& a) { a.save_steps = 0; }),
            "[--save_steps] must be positive with --save_strategy steps");
  EXPECT_EQ(with([](auto& a) { a.save_steps = -3; }), "[--save_steps] must not be negative: -3");
  EXPECT_EQ(with([](auto& a) { a.validation_split_percentage = 100; }),
            "[--validation_split_percentage] must lie in [0, 100): 100");
  EXPECT_EQ(with([](auto& a) { a.ddp_backend = "mpi"; }), "");
  EXPECT_EQ(with([](auto& a) { a.ddp_backend = "nccl"; }),
            "[--ddp_backend] 'nccl' is not available: Kiln runs processes over mpi (nccl comes "
            "with the CUDA backend)");
  EXPECT_EQ(with([](auto& a) { a.ddp_timeout = 0; }), "[--ddp_timeout] must be positive, got 0");
  EXPECT_EQ(with([](auto& a) { a.disable_passes = "cse,fusion"; }), "");
  EXPECT_EQ(with([](auto& a) { a.disable_passes = "cse,fussion"; }),
            "[--disable_passes] unknown pass 'fussion' (known: dce, cse, fold, simplify, fusion, "
            "inplace)");
  EXPECT_EQ(with([](auto& a) { a.early_stopping_patience = 3; }),
            "[--early_stopping_patience] EarlyStoppingCallback requires load_best_model_at_end = "
            "True");
  EXPECT_EQ(with([](auto& a) {
              a.early_stopping_patience = 3;
              a.load_best_model_at_end = true;
              a.save_strategy = SaveStrategy::no;
            }),
            "[--early_stopping_patience] EarlyStoppingCallback requires IntervalStrategy of steps "
            "or epoch");
  EXPECT_EQ(with([](auto& a) {
              a.early_stopping_patience = 3;
              a.load_best_model_at_end = true;
              a.eval_strategy = IntervalStrategy::epoch;
              a.save_strategy = SaveStrategy::epoch;
            }),
            "");
}

TEST(TrainingArgumentsTest, PostInitExpandsHome) {
  ASSERT_NE(std::getenv("HOME"), nullptr);
  TrainingArguments args;
  args.output_dir = "~/kiln_out";
  args.logging_dir = "~/logs";
  training_arguments_post_init(args);
  EXPECT_EQ(args.output_dir, std::string(std::getenv("HOME")) + "/kiln_out");
  EXPECT_EQ(args.logging_dir, std::string(std::getenv("HOME")) + "/logs");
}

TEST(TrainingArgumentsCliTest, ParsesHuggingFaceSpellings) {
  TrainingArguments args = parse({"--do_train", "--do_eval", "false", "--do_predict=yes",
                                  "--output_dir", "out", "--per_device_train_batch_size", "16",
                                  "--learning_rate", "2e-5", "--num_train_epochs", "1.5",
                                  "--max_steps", "+20", "--lr_scheduler_type", "cosine",
                                  "--eval_strategy", "steps", "--eval_steps", "0.25",
                                  "--logging_steps", "0.1", "--save_total_limit", "2",
                                  "--greater_is_better", "--report_to", "jsonl", "tensorboard",
                                  "--text_column_name", "sentence", "--bf16", "True",
                                  "--ddp_backend", "mpi", "--ddp_timeout", "600"});
  EXPECT_TRUE(args.do_train);
  EXPECT_FALSE(args.do_eval);
  EXPECT_TRUE(args.do_predict);
  EXPECT_EQ(args.output_dir, "out");
  EXPECT_EQ(args.per_device_train_batch_size, 16);
  EXPECT_EQ(args.learning_rate, 2e-5);
  EXPECT_EQ(args.num_train_epochs, 1.5);
  EXPECT_EQ(args.max_steps, 20);
  EXPECT_EQ(args.lr_scheduler_type, LrSchedulerType::cosine);
  EXPECT_EQ(args.eval_strategy, IntervalStrategy::steps);
  EXPECT_EQ(args.eval_steps, 0.25);
  EXPECT_EQ(args.logging_steps, 0.1);
  EXPECT_EQ(args.save_total_limit, 2);
  EXPECT_EQ(args.greater_is_better, true);
  EXPECT_EQ(args.report_to, (std::vector<std::string>{"jsonl", "tensorboard"}));
  EXPECT_EQ(args.text_column_name, "sentence");
  EXPECT_TRUE(args.bf16);
  EXPECT_EQ(args.ddp_backend, "mpi");
  EXPECT_EQ(args.ddp_timeout, 600);
  // Untouched fields keep their defaults.
  EXPECT_EQ(args.per_device_eval_batch_size, 8);
  EXPECT_EQ(args.seed, 42);
}

TEST(TrainingArgumentsCliTest, BoolFlagsTakeEveryFormOfHfArgumentParser) {
  for (const char* yes : {"true", "True", "yes", "y", "t", "1"}) {
    EXPECT_TRUE(parse({"--bf16", yes}).bf16) << yes;
    EXPECT_TRUE(parse({std::string("--bf16=") + yes}).bf16) << yes;
  }
  for (const char* no : {"false", "FALSE", "no", "n", "f", "0"}) {
    EXPECT_FALSE(parse({"--do_train", "--do_train", no}).do_train) << no;
  }
  EXPECT_TRUE(parse({"--bf16", "--do_train"}).bf16);  // bare, followed by another flag
  EXPECT_TRUE(parse({"--bf16"}).bf16);                // bare, last
  EXPECT_EQ(parse({"--report_to", "jsonl,tensorboard", "--seed", "7"}).report_to,
            (std::vector<std::string>{"jsonl", "tensorboard"}));
  EXPECT_EQ(parse({"--learning_rate", "1", "--learning_rate", "2"}).learning_rate, 2.0);
}

// transformers 4.x declared include_num_input_tokens_seen a bool, 5.x a bool or a word.
TEST(TrainingArgumentsCliTest, TokenCountingTakesABareFlagOrAWord) {
  auto counting = [](std::vector<std::string> words) {
    TrainingArguments args = parse(std::move(words));
    training_arguments_post_init(args);
    return args.include_num_input_tokens_seen;
  };
  EXPECT_EQ(counting({"--include_num_input_tokens_seen"}), "all");
  EXPECT_EQ(counting({"--include_num_input_tokens_seen", "--seed", "7"}), "all");
  EXPECT_EQ(counting({"--include_num_input_tokens_seen", "non_padding"}), "non_padding");
  EXPECT_EQ(counting({"--include_num_input_tokens_seen=false"}), "no");
  EXPECT_EQ(counting({}), "no");
}

TEST(TrainingArgumentsCliTest, BadValuesNameTheFlag) {
  EXPECT_EQ(parse_error({"--learning_rate", "fast"}),
            "[--learning_rate] expected a number, got 'fast'");
  EXPECT_EQ(parse_error({"--max_steps", "1.5"}), "[--max_steps] expected an integer, got '1.5'");
  EXPECT_EQ(parse_error({"--eval_strategy", "sometimes"}),
            "[--eval_strategy] 'sometimes' is not one of: no, steps, epoch");
  EXPECT_EQ(parse_error({"--do_train", "maybe"}),
            "[--do_train] Truthy value expected: got 'maybe' but expected one of yes/no, "
            "true/false, t/f, y/n, 1/0 (case insensitive)");
  EXPECT_EQ(parse_error({"--no_such_flag"}), "The following argument was not expected: --no_such_flag");
  // The word after an unknown flag is its value, not the positional file of arguments.
  EXPECT_EQ(parse_error({"--no_such_flag", "1"}),
            "The following argument was not expected: --no_such_flag");
  EXPECT_EQ(parse_error({"1"}),
            "args_file: '1' is not a .json file of arguments (is it the value of an unknown flag?)");
  EXPECT_NE(parse_error({"--seed"}).find("--seed"), std::string::npos);
}

TEST(TrainingArgumentsCliTest, HelpListsEveryFlagWithItsDefault) {
  TrainingArguments args;
  CLI::App app("kiln train");
  training_arguments_add_flags(app, args);
  std::string help = app.help();
  for (const ArgumentField& field : training_argument_fields()) {
    EXPECT_NE(help.find("--" + std::string(field.name) + " "), std::string::npos) << field.name;
  }
  for (const char* shown :
       {"--learning_rate FLOAT=5e-05", "--num_train_epochs FLOAT=3.0", "--do_train BOOL=False",
        "--adam_epsilon FLOAT=1e-08", "--per_device_train_batch_size INT=8",
        "--eval_strategy {no,steps,epoch}=no", "--eval_steps FLOAT=None",
        "--lr_scheduler_type {linear,cosine,cosine_with_restarts,polynomial,constant,"
        "constant_with_warmup,inverse_sqrt,reduce_lr_on_plateau,cosine_with_min_lr,"
        "warmup_stable_decay}=linear",
        "--lr_scheduler_kwargs JSON={}",
        "--report_to {none,jsonl,tensorboard,all}=jsonl ...", "--debug TEXT ...",
        "Logging, evaluation and checkpoints:"}) {
    EXPECT_NE(help.find(shown), std::string::npos) << shown << "\n" << help;
  }
}

TEST(TrainingArgumentsCliTest, JsonFileFirstThenFlagsOverride) {
  fs::path file = scratch_folder() / "args.json";
  write_text(file, R"({"learning_rate": 1e-4, "num_train_epochs": 2, "do_train": true,
                       "report_to": "tensorboard", "eval_steps": null})");
  TrainingArguments args = parse({file.string(), "--learning_rate", "3e-5"});
  EXPECT_EQ(args.learning_rate, 3e-5);
  EXPECT_EQ(args.num_train_epochs, 2.0);
  EXPECT_TRUE(args.do_train);
  EXPECT_EQ(args.report_to, std::vector<std::string>{"tensorboard"});

  write_text(file, R"({"learning_rate": "high"})");
  EXPECT_EQ(parse_error({file.string()}),
            "[" + file.string() + "] key 'learning_rate': expected a number, got \"high\"");
}

TEST(TrainingArgumentsJsonTest, UnknownKeysAndWrongTypesNameKeyAndFile) {
  fs::path file = scratch_folder() / "args.json";
  auto load_error = [&](const std::string& text) {
    write_text(file, text);
    TrainingArguments args;
    return error_of([&] { training_arguments_load_json(args, file.string()); });
  };
  const std::string where = "[" + file.string() + "] ";
  EXPECT_EQ(load_error(R"({"learning_rat": 1e-4})"),
            where + "unknown key 'learning_rat' (not a training argument)");
  EXPECT_EQ(load_error(R"({"per_device_train_batch_size": 8.5})"),
            where + "key 'per_device_train_batch_size': expected an integer, got 8.5");
  EXPECT_EQ(load_error(R"({"do_train": "true"})"),
            where + "key 'do_train': expected true or false, got \"true\"");
  EXPECT_EQ(load_error(R"({"output_dir": null})"),
            where + "key 'output_dir': expected a string, got null");
  EXPECT_EQ(load_error(R"({"save_total_limit": "2"})"),
            where + "key 'save_total_limit': expected an integer or null, got \"2\"");
  EXPECT_EQ(load_error(R"({"eval_strategy": "often"})"),
            where + "key 'eval_strategy': expected one of \"no\", \"steps\", \"epoch\", got "
                    "\"often\"");
  EXPECT_EQ(load_error(R"({"report_to": [1]})"),
            where + "key 'report_to': expected a string or a list of strings, got [1]");
  EXPECT_EQ(load_error(R"(["learning_rate"])"),
            where + "expected a JSON object, got array");
  EXPECT_NE(load_error(R"({"seed": 1,})").find(where + "invalid JSON"), std::string::npos);
  EXPECT_EQ(load_error(R"({"seed": 7, "learning_rate": 1, "save_total_limit": null})"), "");

  fs::path missing = file.parent_path() / "missing.json";
  TrainingArguments args;
  std::string error = error_of([&] { training_arguments_load_json(args, missing.string()); });
  EXPECT_TRUE(error.starts_with("[" + missing.string() + "]")) << error;
}

TEST(TrainingArgumentsJsonTest, TrainingArgsJsonRoundTrips) {
  TrainingArguments args = parse({"--output_dir", "out", "--do_train", "--eval_strategy", "epoch",
                                  "--save_strategy", "epoch", "--load_best_model_at_end",
                                  "--report_to", "all", "--warmup_steps", "0.1",
                                  "--early_stopping_patience", "2", "--data_seed", "9"});
  training_arguments_post_init(args);
  fs::path file = scratch_folder() / "training_args.json";
  training_arguments_write_json(file.string(), args);

  nlohmann::json written = nlohmann::json::parse(std::ifstream(file));
  EXPECT_EQ(written.size(), training_argument_fields().size());
  EXPECT_EQ(written["learning_rate"], 5e-5);
  EXPECT_EQ(written["eval_strategy"], "epoch");
  EXPECT_EQ(written["metric_for_best_model"], "loss");
  EXPECT_EQ(written["greater_is_better"], false);
  EXPECT_EQ(written["report_to"], nlohmann::json({"jsonl", "tensorboard"}));
  EXPECT_TRUE(written["eval_steps"].is_null());

  TrainingArguments back;
  training_arguments_load_json(back, file.string());
  training_arguments_post_init(back);  // idempotent: the same arguments again
  EXPECT_EQ(training_arguments_to_json(back), training_arguments_to_json(args));
}

// --lr_scheduler_kwargs as HF takes it: a JSON object string on the command line; an object (or
// such a string) in a JSON file; an object in training_args.json.
TEST(TrainingArgumentsJsonTest, LrSchedulerKwargsIsAJsonObject) {
  EXPECT_EQ(parse({"--lr_scheduler_kwargs", R"({"num_cycles": 2})"}).lr_scheduler_kwargs,
            nlohmann::json({{"num_cycles", 2}}));
  EXPECT_EQ(parse({}).lr_scheduler_kwargs, nlohmann::json::object());
  EXPECT_EQ(parse_error({"--lr_scheduler_kwargs", "num_cycles=2"}),
            "[--lr_scheduler_kwargs] expected a JSON object such as '{\"num_cycles\": 2}', got "
            "'num_cycles=2'");
  fs::path file = scratch_folder() / "args.json";
  for (const char* text : {R"({"lr_scheduler_kwargs": {"power": 2.0}})",
                           R"({"lr_scheduler_kwargs": "{\"power\": 2.0}"})"}) {
    write_text(file, text);
    TrainingArguments args;
    training_arguments_load_json(args, file.string());
    EXPECT_EQ(args.lr_scheduler_kwargs, nlohmann::json({{"power", 2.0}})) << text;
    EXPECT_EQ(training_arguments_to_json(args)["lr_scheduler_kwargs"],
              nlohmann::json({{"power", 2.0}}));
  }
  write_text(file, R"({"lr_scheduler_kwargs": [2]})");
  TrainingArguments args;
  EXPECT_EQ(error_of([&] { training_arguments_load_json(args, file.string()); }),
            "[" + file.string() + "] key 'lr_scheduler_kwargs': expected a JSON object, got [2]");
}

// transformers 4.x wrote include_num_input_tokens_seen as a JSON boolean (a bool or a str in
// 5.x); true counts every token, false none.
TEST(TrainingArgumentsJsonTest, BooleanTokenCountingFromOlderArgumentFiles) {
  for (auto [text, expected] : {std::pair{"true", "all"}, std::pair{"false", "no"}}) {
    fs::path file = scratch_folder() / "args.json";
    write_text(file, std::string(R"({"include_num_input_tokens_seen": )") + text + "}");
    TrainingArguments args;
    training_arguments_load_json(args, file.string());
    training_arguments_post_init(args);
    EXPECT_EQ(args.include_num_input_tokens_seen, expected) << text;
  }
}

// transformers 4.x took evaluation_strategy (with a FutureWarning) for eval_strategy.
TEST(TrainingArgumentsJsonTest, EvaluationStrategyIsTheOldNameOfEvalStrategy) {
  const std::string warning =
      "kiln: warning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of "
      "Transformers. Use `eval_strategy` instead\n";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(parse({"--evaluation_strategy", "epoch"}).eval_strategy, IntervalStrategy::epoch);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), warning);
  EXPECT_EQ(parse_error({"--evaluation_strategy", "often"}),
            "[--eval_strategy] 'often' is not one of: no, steps, epoch");

  fs::path file = scratch_folder() / "args.json";
  write_text(file, R"({"evaluation_strategy": "steps"})");
  TrainingArguments args;
  ::testing::internal::CaptureStderr();
  training_arguments_load_json(args, file.string());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), warning);
  EXPECT_EQ(args.eval_strategy, IntervalStrategy::steps);
}

TEST(TrainingPlanTest, StepsAsTrainerComputesThem) {
  TrainingArguments args;
  args.gradient_accumulation_steps = 3;
  args.logging_steps = 0.1;
  training_arguments_post_init(args);
  TrainingPlan plan = training_plan(args, 10);
  EXPECT_EQ(plan.update_steps_per_epoch, 4);  // 10 // 3 + (10 % 3 > 0)
  EXPECT_EQ(plan.max_steps, 12);              // ceil(3.0 * 4)
  EXPECT_EQ(plan.num_train_epochs, 3);
  EXPECT_EQ(plan.logging_steps, 2);  // ceil(12 * 0.1)
  EXPECT_EQ(plan.eval_steps, 0);
  EXPECT_EQ(plan.save_steps, 500);
  EXPECT_EQ(plan.warmup_steps, 0);

  args.max_steps = 10;
  plan = training_plan(args, 10);
  EXPECT_EQ(plan.max_steps, 10);
  EXPECT_EQ(plan.num_train_epochs, 3);  // 10 // 4 + 1

  args.max_steps = -1;
  args.num_train_epochs = 2.5;
  plan = training_plan(args, 10);
  EXPECT_EQ(plan.max_steps, 10);  // ceil(2.5 * 4)
  EXPECT_EQ(plan.num_train_epochs, 3);

  // TrainerState.compute_steps(args, 37) in transformers 5.24 gives 4, 2, 10.
  TrainingArguments ratios;
  ratios.eval_strategy = IntervalStrategy::steps;
  ratios.logging_steps = 0.1;
  ratios.eval_steps = 0.05;
  ratios.save_steps = 0.25;
  ratios.max_steps = 37;
  training_arguments_post_init(ratios);
  plan = training_plan(ratios, 100);
  EXPECT_EQ(plan.logging_steps, 4);
  EXPECT_EQ(plan.eval_steps, 2);
  EXPECT_EQ(plan.save_steps, 10);

  EXPECT_EQ(error_of([&] { training_plan(args, 0); }),
            "[--per_device_train_batch_size] the training set gives no batch of this size (0 "
            "batches)");
}

TEST(TrainingPlanTest, WarmupStepsAsGetWarmupSteps) {
  TrainingArguments args;
  args.warmup_ratio = 0.1;
  EXPECT_EQ(warmup_steps_for(args, 25), 3);  // ceil(2.5)
  EXPECT_EQ(warmup_steps_for(args, 100), 10);
  args.warmup_steps = 7;  // steps win over the ratio
  EXPECT_EQ(warmup_steps_for(args, 25), 7);
  args.warmup_ratio = 0;
  args.warmup_steps = 0.1;  // transformers 5: a ratio; get_warmup_steps(25) == 3 there
  EXPECT_EQ(warmup_steps_for(args, 25), 3);
  args.warmup_steps = 1;
  EXPECT_EQ(warmup_steps_for(args, 25), 1);
}

}  // namespace
}  // namespace kiln
