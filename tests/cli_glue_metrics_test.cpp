// --task_name end to end: the metrics run_glue.py logs for the GLUE task (eval_ and test_ names),
// Matthews correlation recomputed here from the written predictions with the two-class formula,
// stsb's Pearson and Spearman from the written scores, and a task whose kind does not match the
// labels refused naming --task_name.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "cli_test_util.h"
#include "kiln/train/glue_metrics.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::read_json;
using testing::run_kiln;

TEST(CliGlueMetrics, ColaReportsMatthewsCorrelationOfThePredictions) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 320, 5);
  fs::path test = testing::write_sentiment_tsv(dir / "test.tsv", 40, 6);
  fs::path out = dir / "out";
  testing::CommandResult trained =
      run_kiln("train " + model + " " + testing::quick_run_flags(out) + " --train_file " +
               train.string() + " --validation_file " + test.string() +
               " --task_name cola --do_eval --num_train_epochs 4 --save_strategy no");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  nlohmann::json eval = read_json(out / "eval_results.json");
  EXPECT_TRUE(eval.contains("eval_matthews_correlation")) << eval.dump();
  EXPECT_FALSE(eval.contains("eval_accuracy")) << eval.dump();

  testing::CommandResult predicted =
      run_kiln("predict --model_name_or_path " + out.string() + " " +
               testing::quick_run_flags(dir / "pred") + " --test_file " + test.string() +
               " --task_name cola");
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  const ClassificationDataset labelled = testing::load_sentiment(test);
  std::istringstream jsonl(testing::read_text(dir / "pred" / "predict_results.jsonl"));
  double tp = 0, tn = 0, fp = 0, fn = 0;
  size_t row = 0;
  for (std::string line; std::getline(jsonl, line); ++row) {
    const bool predicted_one = nlohmann::json::parse(line)["label_id"] == 1;
    const bool label_one = labelled.label_ids.at(row) == 1;
    (predicted_one ? (label_one ? tp : fp) : (label_one ? fn : tn)) += 1;
  }
  ASSERT_EQ(row, 40u);
  const double denominator = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn);
  const double expected = denominator == 0 ? 0.0 : (tp * tn - fp * fn) / std::sqrt(denominator);
  ASSERT_GT(tp + fp, 0) << "a model that never predicts class 1 gives the degenerate 0";
  ASSERT_GT(tn + fn, 0) << "a model that never predicts class 0 gives the degenerate 0";
  nlohmann::json metrics = read_json(dir / "pred" / "predict_results.json");
  EXPECT_NEAR(metrics["test_matthews_correlation"].get<double>(), expected, 1e-12)
      << metrics.dump();
  EXPECT_GT(expected, 0.3) << "the separable task is learnt";
  // The model saved after training scores the same file alike in both commands.
  EXPECT_NEAR(metrics["test_matthews_correlation"].get<double>(),
              eval["eval_matthews_correlation"].get<double>(), 1e-12);
}

// stsb, the regression task: predict_results.json holds the Pearson and Spearman correlations of
// the scores `kiln predict` writes with the file's (by glue_metrics_test's scipy-checked
// formulas), and training's evaluation of the same file gives the same.
TEST(CliGlueMetrics, StsbReportsPearsonAndSpearmanOfThePredictedScores) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  // Scores about 0 that a few steps can separate: the positive rows 1.5, the negative -1.5.
  fs::path scores = testing::write_sentiment_tsv(dir / "scores.tsv", 48, 9, {"-1.5", "1.5"});
  fs::path out = dir / "out";
  testing::CommandResult trained =
      run_kiln("train " + model + " " + testing::quick_run_flags(out) + " --train_file " +
               scores.string() + " --validation_file " + scores.string() +
               " --task_name stsb --do_eval --num_train_epochs 2 --save_strategy no");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  nlohmann::json eval = read_json(out / "eval_results.json");
  EXPECT_FALSE(eval.contains("eval_accuracy")) << eval.dump();

  testing::CommandResult predicted =
      run_kiln("predict --model_name_or_path " + out.string() + " " +
               testing::quick_run_flags(dir / "pred") + " --test_file " + scores.string() +
               " --task_name stsb");
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  const ClassificationDataset labelled = testing::load_sentiment(scores);
  ASSERT_EQ(labelled.label_kind, LabelKind::regression);
  const std::vector<double> truth(labelled.label_values.begin(), labelled.label_values.end());
  std::vector<double> predictions;
  std::istringstream jsonl(testing::read_text(dir / "pred" / "predict_results.jsonl"));
  for (std::string line; std::getline(jsonl, line);) {
    predictions.push_back(nlohmann::json::parse(line)["prediction"].get<double>());
  }
  ASSERT_EQ(predictions.size(), truth.size());
  const double pearson = pearson_correlation(predictions, truth);
  const double spearman = spearman_correlation(predictions, truth);
  EXPECT_GT(pearson, 0.3) << "the separable scores are learnt";
  nlohmann::json metrics = read_json(dir / "pred" / "predict_results.json");
  EXPECT_NEAR(metrics["test_pearson"].get<double>(), pearson, 1e-9) << metrics.dump();
  EXPECT_NEAR(metrics["test_spearmanr"].get<double>(), spearman, 1e-9) << metrics.dump();
  EXPECT_NEAR(metrics["test_combined_score"].get<double>(), (pearson + spearman) / 2, 1e-9);
  EXPECT_NEAR(eval["eval_pearson"].get<double>(), pearson, 1e-9) << eval.dump();
  EXPECT_NEAR(eval["eval_spearmanr"].get<double>(), spearman, 1e-9) << eval.dump();
}

// Two steps on 32 generated rows, evaluated on the same file, reporting --task_name's metrics;
// the files are dir/train.tsv and dir/out/.
testing::CommandResult train_two_steps(const fs::path& dir, const std::string& task_name) {
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 32, 7);
  return run_kiln("train " + model + " " + testing::quick_run_flags(dir / "out") +
                  " --train_file " + train.string() + " --validation_file " + train.string() +
                  " --task_name " + task_name + " --do_eval --max_steps 2 --save_strategy no");
}

TEST(CliGlueMetrics, MrpcAddsTheCombinedScore) {
  fs::path dir = testing::scratch_folder();
  testing::CommandResult trained = train_two_steps(dir, "mrpc");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  nlohmann::json eval = read_json(dir / "out" / "eval_results.json");
  EXPECT_DOUBLE_EQ(eval["eval_combined_score"].get<double>(),
                   (eval["eval_accuracy"].get<double>() + eval["eval_f1"].get<double>()) / 2);
}

TEST(CliGlueMetrics, RegressionTaskOnClassLabelsIsRefused) {
  fs::path dir = testing::scratch_folder();
  testing::CommandResult refused = train_two_steps(dir, "stsb");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("[--task_name] stsb is a regression task but " +
                                (dir / "train.tsv").string() + " has class labels"),
            std::string::npos)
      << refused.output;
}

TEST(CliGlueMetrics, UnknownTaskNameIsAUsageError) {
  testing::CommandResult unknown = train_two_steps(testing::scratch_folder(), "imdb");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("'imdb' is not one of: cola, sst2"), std::string::npos)
      << unknown.output;
}

}  // namespace
}  // namespace kiln
