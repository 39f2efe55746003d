// The command line end to end: `kiln train` from a config with evaluation, checkpoints and
// reports; `kiln evaluate` and `kiln predict` on the saved model; DistilBERT, RoBERTa and ELECTRA
// trained, evaluated and predicting as BERT; a bare BertModel checkpoint getting a new
// classifier; --help listing every flag with its default.
#include <gtest/gtest.h>

#include <regex>

#include "cli_test_util.h"
#include "kiln/io/dataset_order.h"
#include "kiln/models/bert_pretrained.h"
#include "kiln/models/model_family.h"
#include "kiln/train/training_arguments_fields.h"
#include "transformers_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::read_json;
using testing::run_kiln;

// kiln train on 400 generated sentiment rows (dir/train.tsv, 20% held out) from a tiny model
// (BERT, or the family `model_type`), evaluating before training and after each of 4 epochs, into
// dir/out; `flags` are added last.
testing::CommandResult train_evaluating_each_epoch(const fs::path& dir, const std::string& flags,
                                                   const std::string& model_type = "bert") {
  std::string model = testing::write_tiny_family_model(dir / "model", model_type);
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 400, 31);
  return run_kiln("train " + model + " " + testing::quick_run_flags(dir / "out") +
                  " --train_file " + train.string() +
                  " --validation_split_percentage 20 --num_train_epochs 4 --eval_on_start"
                  " --eval_strategy epoch --save_strategy no --report_to none" + flags);
}

// The evaluations' entries of the log history in out/trainer_state.json, in order.
std::vector<nlohmann::json> eval_entries(const fs::path& out) {
  std::vector<nlohmann::json> evals;
  for (const nlohmann::json& entry :
       trainer_state_load((out / "trainer_state.json").string()).log_history) {
    if (entry.contains("eval_loss")) evals.push_back(entry);
  }
  return evals;
}

// kiln predict with the model in `out` on the 5 rows of `test` into `pred`: predict_results.txt
// labels each row with one of the two `labels`.
void expect_predicts_labels(const fs::path& out, const fs::path& test, const fs::path& pred,
                            const std::vector<std::string>& labels) {
  testing::CommandResult predicted =
      run_kiln("predict --model_name_or_path " + out.string() + " " +
               testing::quick_run_flags(pred) + " --test_file " + test.string());
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  std::istringstream text(testing::read_text(pred / "predict_results.txt"));
  std::string line;
  std::getline(text, line);
  EXPECT_EQ(line, "index\tprediction");
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(std::getline(text, line));
    const std::string index = std::to_string(i) + "\t";
    EXPECT_TRUE(line == index + labels[0] || line == index + labels[1]) << line;
  }
}

TEST(CliTrain, TrainEvaluatePredictEndToEnd) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 60, 21, {"neg", "pos"});
  fs::path test = testing::write_sentiment_tsv(dir / "test.tsv", 5, 22, {"neg", "pos"});
  fs::path out = dir / "out";
  testing::CommandResult trained = run_kiln(
      "train " + model + " " + testing::quick_run_flags(out) + " --train_file " + train.string() +
      " --validation_split_percentage 20 --num_train_epochs 2 --do_eval --save_steps 4"
      " --save_total_limit 1 --report_to jsonl tensorboard");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  EXPECT_NE(trained.output.find("validation: holding out 12 of the 60 rows"), std::string::npos);
  EXPECT_NE(trained.output.find("***** train metrics *****"), std::string::npos);
  EXPECT_NE(trained.output.find("***** eval metrics *****"), std::string::npos);
  EXPECT_NE(trained.output.find("compiling the training step for input_ids i32(8,16)"),
            std::string::npos);

  // 48 training examples in batches of 8: 6 steps an epoch, 12 in all.
  for (const char* file : {"config.json", "model.safetensors", "vocab.txt", "tokenizer.json",
                           "train_results.json", "eval_results.json", "all_results.json",
                           "trainer_state.json", "trainer_log.jsonl", "checkpoint-12"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file;
  }
  EXPECT_FALSE(fs::exists(out / "checkpoint-8"));  // rotated away (limit 1)
  EXPECT_FALSE(fs::is_empty(out / "runs"));        // TensorBoard events
  EXPECT_EQ(bert_config_read((out / "config.json").string()).id2label,
            (std::vector<std::string>{"neg", "pos"}));
  nlohmann::json results = read_json(out / "all_results.json");
  for (const char* key : {"train_loss", "train_runtime", "train_samples", "train_compiles",
                          "eval_loss", "eval_accuracy", "eval_f1", "eval_samples", "epoch"}) {
    EXPECT_TRUE(results.contains(key)) << key;
  }
  EXPECT_EQ(results["train_samples"], 48);
  EXPECT_EQ(results["eval_samples"], 12);
  TrainerState state = trainer_state_load((out / "trainer_state.json").string());
  EXPECT_EQ(state.global_step, 12);
  // The JSONL log holds the entries of log_history, then the final evaluation (logged after
  // trainer_state.json was saved, as run_glue.py orders it).
  std::vector<nlohmann::json> logged;
  std::istringstream lines(testing::read_text(out / "trainer_log.jsonl"));
  for (std::string line; std::getline(lines, line);) logged.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(logged.size(), state.log_history.size() + 1);
  for (size_t i = 0; i < state.log_history.size(); ++i) EXPECT_EQ(logged[i], state.log_history[i]);
  EXPECT_EQ(logged.back()["eval_accuracy"], results["eval_accuracy"]);

  // The saved model evaluates to the same metrics on the same held-out split.
  testing::CommandResult evaluated =
      run_kiln("evaluate --model_name_or_path " + out.string() + " " +
               testing::quick_run_flags(dir / "eval") + " --train_file " + train.string() +
               " --validation_split_percentage 20");
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.output;
  nlohmann::json again = read_json(dir / "eval" / "eval_results.json");
  EXPECT_EQ(again["eval_accuracy"], results["eval_accuracy"]);
  EXPECT_NEAR(again["eval_loss"].get<double>(), results["eval_loss"].get<double>(), 1e-9);

  expect_predicts_labels(out, test, dir / "pred", {"neg", "pos"});
  std::string line;
  std::istringstream jsonl(testing::read_text(dir / "pred" / "predict_results.jsonl"));
  ASSERT_TRUE(std::getline(jsonl, line));
  nlohmann::json first = nlohmann::json::parse(line);
  double total =
      first["probabilities"]["neg"].get<double>() + first["probabilities"]["pos"].get<double>();
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_EQ(first["index"], 0);
}

// The eval loss of the model `trained` left in dir/out falls from the untrained model's, and its
// accuracy beats always answering the most common label.
void expect_learned(const fs::path& dir, const testing::CommandResult& trained) {
  std::vector<nlohmann::json> evals = eval_entries(dir / "out");
  ASSERT_EQ(evals.size(), 5u);  // before training, then after each epoch
  const double first_loss = evals.front()["eval_loss"].get<double>();
  const double last_loss = evals.back()["eval_loss"].get<double>();
  EXPECT_LT(last_loss, 0.8 * first_loss) << trained.output;
  // The most common label's share of the 80 held-out examples.
  // The same split as kiln train's (--seed 3).
  ClassificationDataset held_out =
      split_dataset(testing::load_sentiment(dir / "train.tsv"), 0.2, 3).second;
  ASSERT_EQ(held_out.size(), 80u);
  int64_t positive = 0;
  for (int64_t label : held_out.label_ids) positive += label == 1;
  const double majority = std::max<double>(positive, 80 - positive) / 80.0;
  EXPECT_GT(evals.back()["eval_accuracy"].get<double>(), majority + 0.1) << trained.output;
}

// Not only files: training learns. On a task a bag of words separates (the sign of the
// sentiment words decides the label), the eval loss falls from the untrained model's and the
// accuracy beats always answering the most common label.
TEST(CliTrain, TrainingLearnsASeparableTask) {
  fs::path dir = testing::scratch_folder();
  testing::CommandResult trained = train_evaluating_each_epoch(dir, "");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  expect_learned(dir, trained);
}

// Every family trains as BERT does (the test above): from a user's config.json for it, the
// model learns and is saved as the family's ...ForSequenceClassification, which `kiln evaluate`
// scores as training's last evaluation did, `kiln predict` labels, and transformers loads
// (tests/fixtures_gen/make_bert_fixtures.py --check-kiln-predictions, at test time).
struct Family {
  std::string model_type;
  std::string architecture;
};
void PrintTo(const Family& family, std::ostream* out) { *out << family.model_type; }
class CliTrainFamily : public ::testing::TestWithParam<Family> {};

TEST_P(CliTrainFamily, LearnsASeparableTaskThenEvaluatesAndPredicts) {
  const Family& family = GetParam();
  fs::path dir = testing::scratch_folder();
  testing::CommandResult trained = train_evaluating_each_epoch(dir, "", family.model_type);
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  expect_learned(dir, trained);
  const fs::path out = dir / "out";
  std::unique_ptr<PretrainedConfig> config = model_config_read((out / "config.json").string());
  EXPECT_EQ(config->model_type, family.model_type);
  EXPECT_EQ(config->architectures, std::vector<std::string>{family.architecture});

  testing::CommandResult evaluated =
      run_kiln("evaluate --model_name_or_path " + out.string() + " " +
               testing::quick_run_flags(dir / "eval") + " --train_file " +
               (dir / "train.tsv").string() + " --validation_split_percentage 20");
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.output;
  nlohmann::json again = read_json(dir / "eval" / "eval_results.json");
  const nlohmann::json last = eval_entries(out).back();
  EXPECT_EQ(again["eval_accuracy"], last["eval_accuracy"]);
  EXPECT_NEAR(again["eval_loss"].get<double>(), last["eval_loss"].get<double>(), 1e-9);

  fs::path test = testing::write_sentiment_tsv(dir / "test.tsv", 5, 22);
  expect_predicts_labels(out, test, dir / "pred", {"0", "1"});

  // transformers loads the saved folder, tokenizer included (DistilBERT's gives no
  // token_type_ids, which its model refuses), and gives kiln predict's probabilities.
  KILN_REQUIRE_TRANSFORMERS();
  testing::CommandResult checked = testing::run_command(
      testing::python_command() + " " KILN_SOURCE_DIR "/tests/fixtures_gen/make_bert_fixtures.py"
      " --check-kiln-predictions " + out.string() + " " + test.string() + " " +
      (dir / "pred" / "predict_results.jsonl").string());
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_NE(checked.output.find("probabilities: max |diff|"), std::string::npos)
      << checked.output;
}

INSTANTIATE_TEST_SUITE_P(
    Families, CliTrainFamily,
    ::testing::Values(Family{"distilbert", "DistilBertForSequenceClassification"},
                      Family{"roberta", "RobertaForSequenceClassification"},
                      Family{"electra", "ElectraForSequenceClassification"}),
    [](const auto& info) { return info.param.model_type; });

// --max_train_samples, --max_eval_samples and --max_predict_samples keep the first examples of
// each classification split, as run_glue.py's select(range(n)).
TEST(CliTrain, MaxSamplesKeepTheFirstExamples) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path data = testing::write_sentiment_tsv(dir / "data.tsv", 40, 7);
  fs::path out = dir / "out";
  testing::CommandResult trained = run_kiln(
      "train " + model + " " + testing::quick_run_flags(out) + " --train_file " + data.string() +
      " --validation_file " + data.string() + " --test_file " + data.string() +
      " --max_train_samples 10 --max_eval_samples 7 --max_predict_samples 5 --do_eval"
      " --do_predict --max_steps 1 --save_strategy no --report_to none");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const nlohmann::json results = testing::read_json(out / "all_results.json");
  EXPECT_EQ(results["train_samples"], 10) << results;
  EXPECT_EQ(results["eval_samples"], 7) << results;
  const std::string predictions = testing::read_text(out / "predict_results.txt");
  EXPECT_EQ(std::count(predictions.begin(), predictions.end(), '\n'), 1 + 5) << predictions;
}

// --model_name_or_path org/name finds the model offline in the Hugging Face cache (HF_HUB_CACHE),
// as from_pretrained does; a model not there is an error naming where Kiln looked.
TEST(CliTrain, AHubIdLoadsTheModelFromTheHuggingFaceCache) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path data = testing::write_sentiment_tsv(dir / "data.tsv", 16, 7);
  const fs::path cache = dir / "hub";
  const fs::path snapshot = cache / "models--org--tiny" / "snapshots" / "c0ffee";
  fs::create_directories(cache / "models--org--tiny" / "refs");
  testing::write_text(cache / "models--org--tiny" / "refs" / "main", "c0ffee");
  testing::CommandResult trained = run_kiln(
      "train " + model + " " + testing::quick_run_flags(snapshot) + " --train_file " +
      data.string() + " --max_steps 1 --save_strategy no --report_to none");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const std::string environment = "HF_HUB_CACHE=" + cache.string() + " ";
  const std::string flags = " --output_dir " + (dir / "eval").string() + " --validation_file " +
                            data.string() +
                            " --no_header --column_names label,source,text --max_seq_length 16";
  testing::CommandResult evaluated = testing::run_command(
      environment + KILN_BINARY + " evaluate --model_name_or_path org/tiny" + flags);
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.output;
  EXPECT_TRUE(fs::exists(dir / "eval" / "eval_results.json"));
  testing::CommandResult missing = testing::run_command(
      environment + KILN_BINARY + " evaluate --model_name_or_path org/other" + flags);
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("'org/other' is neither a local folder nor a model in the "
                                "Hugging Face cache (no " +
                                (cache / "models--org--other").string() + ")"),
            std::string::npos)
      << missing.output;
}

// --label_smoothing_factor reaches the loss: a trained (confident) classifier's eval loss is
// larger with smoothing (the mean of -log p over the classes exceeds -log p of the right one),
// and a regression model refuses it (LabelSmoother needs class labels).
TEST(CliTrain, LabelSmoothingChangesTheLoss) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 400, 31);
  fs::path out = dir / "out";
  testing::CommandResult trained = run_kiln(
      "train " + model + " " + testing::quick_run_flags(out) + " --train_file " + train.string() +
      " --label_smoothing_factor 0.1 --num_train_epochs 4 --save_strategy no --report_to none");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  auto eval_loss = [&](const std::string& smoothing) {
    fs::path eval_out = dir / ("eval" + smoothing);
    testing::CommandResult evaluated = run_kiln(
        "evaluate --model_name_or_path " + out.string() + " --validation_file " + train.string() +
        " --no_header --column_names label,source,text --max_seq_length 16"
        " --label_smoothing_factor " + smoothing + " --output_dir " + eval_out.string());
    EXPECT_EQ(evaluated.exit_code, 0) << evaluated.output;
    return testing::read_json(eval_out / "eval_results.json")["eval_loss"].get<double>();
  };
  EXPECT_GT(eval_loss("0.5"), eval_loss("0") + 0.01);

  testing::write_text(dir / "values.tsv", "0.5\ts\tgood movie\n-1.25\ts\tbad food\n");
  testing::CommandResult regression = run_kiln(
      "train " + model + " " + testing::quick_run_flags(dir / "out2") + " --train_file " +
      (dir / "values.tsv").string() + " --label_smoothing_factor 0.1 --max_steps 1");
  EXPECT_EQ(regression.exit_code, 1) << regression.output;
  EXPECT_NE(regression.output.find("[--label_smoothing_factor] smooths class labels; this "
                                   "model's problem_type is regression"),
            std::string::npos)
      << regression.output;
}

// --optim from the command line trains: the eval loss falls from the untrained model's (torch
// parity of every optimizer's update is optimizer_trajectory_test's). Plain SGD is not here: at
// every rate tried (0.05 to 3, with and without momentum, clipping and warm-up) it stays on this
// tiny model's chance plateau for 8 epochs.
using OptimizerAndRate = std::pair<std::string, std::string>;
class CliTrainOptimizer : public ::testing::TestWithParam<OptimizerAndRate> {};

TEST_P(CliTrainOptimizer, Learns) {
  const auto [optimizer, learning_rate] = GetParam();
  fs::path dir = testing::scratch_folder();
  testing::CommandResult trained = train_evaluating_each_epoch(
      dir, " --optim " + optimizer + " --learning_rate " + learning_rate);
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  std::vector<nlohmann::json> evals = eval_entries(dir / "out");
  ASSERT_EQ(evals.size(), 5u);
  EXPECT_LT(evals.back()["eval_loss"].get<double>(), 0.9 * evals.front()["eval_loss"].get<double>())
      << trained.output;
}

INSTANTIATE_TEST_SUITE_P(Optimizers, CliTrainOptimizer,
                         ::testing::Values(OptimizerAndRate{"adafactor", "0.003"},
                                           OptimizerAndRate{"adagrad", "0.03"},
                                           OptimizerAndRate{"rmsprop", "0.003"}),
                         [](const auto& info) { return info.param.first; });

TEST(CliTrain, BareBertModelCheckpointGetsANewClassifier) {
  fs::path dir = testing::scratch_folder();
  testing::write_tiny_model_files(dir / "bare");
  BertConfig config = bert_config_read((dir / "bare" / "config.json").string());
  Graph graph;
  BertBuildOptions options;
  options.seq_len = 1;
  ParameterSet params(graph);
  DropoutContext dropout;
  bert_model(config, bert_inputs(graph, options), params, dropout, "");
  params.initialize(1);
  bert_save_pretrained((dir / "bare").string(), config, params);
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 16, 2);
  testing::CommandResult result =
      run_kiln("train --model_name_or_path " + (dir / "bare").string() + " " +
               testing::quick_run_flags(dir / "out") + " --train_file " + train.string() +
               " --max_steps 2 --save_strategy no");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Some weights of BertForSequenceClassification were not "
                               "initialized from the model checkpoint at " +
                               (dir / "bare").string() +
                               " and are newly initialized: ['classifier.bias', "
                               "'classifier.weight']"),
            std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("were not used"), std::string::npos);
}

// (evaluate and predict list only the flags they read: CliUsage.EvaluateAndPredictList...)
TEST(CliTrain, HelpListsEveryFlagWithItsDefault) {
  testing::CommandResult help = run_kiln("train --help");
  ASSERT_EQ(help.exit_code, 0);
  for (const ArgumentField& field : training_argument_fields()) {
    std::string flag = "\n  --" + std::string(field.name) + " ";
    size_t at = help.output.find(flag);
    ASSERT_NE(at, std::string::npos) << flag;
    // "--name TYPE=default", or a help text that says what an empty default means (the entry
    // runs to the next flag; its lines are wrapped).
    std::string entry = help.output.substr(at + 1, help.output.find("\n  --", at + 1) - at - 1);
    std::string flat = std::regex_replace(entry, std::regex("\n +"), " ");
    EXPECT_TRUE(flat.find('=') != std::string::npos || flat.find("(default: ") != std::string::npos)
        << flat;
  }
  EXPECT_NE(help.output.find("--per_device_train_batch_size INT=8"), std::string::npos);
  EXPECT_NE(help.output.find("--no_header"), std::string::npos);
  testing::CommandResult top = run_kiln("--help");
  EXPECT_EQ(top.exit_code, 0);
  for (const char* command : {"train", "evaluate", "predict", "demo"}) {
    EXPECT_NE(top.output.find(command), std::string::npos) << command;
  }
}

}  // namespace
}  // namespace kiln
