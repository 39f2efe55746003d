// Multi-label classification end to end through the CLI: a JSON Lines file whose label lists
// say which kinds of sentiment words a sentence has ("pos", "neg", both or neither) trains a
// model with problem_type multi_label_classification that beats the trivial predictors, and
// `kiln predict` writes each row's label set (the same sets the evaluation scored).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::run_kiln;

struct LabelledRows {
  std::vector<std::set<std::string>> labels;
};

// `count` sentences of 2 to 6 words drawn from the three word lists; a sentence's labels are
// "pos" if it has a positive word and "neg" if it has a negative one.
LabelledRows write_multi_label_jsonl(const fs::path& path, int64_t count, int64_t seed) {
  LabelledRows rows;
  std::string text;
  for (int64_t i = 0; i < count; ++i) {
    auto draw = [&](int64_t k) { return random_bits_at(seed, i, 0, k); };
    const int64_t length = 2 + draw(0) % 5;
    std::set<std::string> labels;
    std::string sentence;
    for (int64_t w = 0; w < length; ++w) {
      const uint32_t kind = draw(1 + 2 * w) % 4, pick = draw(2 + 2 * w);
      const std::vector<std::string>& words = kind == 0   ? testing::kPositive
                                              : kind == 1 ? testing::kNegative
                                                          : testing::kNeutral;
      if (kind == 0) labels.insert("pos");
      if (kind == 1) labels.insert("neg");
      sentence += (w ? " " : "") + words[pick % words.size()];
    }
    text += nlohmann::json{{"text", sentence}, {"label", labels}}.dump() + "\n";
    rows.labels.push_back(std::move(labels));
  }
  testing::write_text(path, text);
  return rows;
}

TEST(CliMultiLabel, TrainsBeyondTheTrivialPredictorsAndPredictsLabelSets) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path train = dir / "train.jsonl", eval = dir / "eval.jsonl";
  write_multi_label_jsonl(train, 400, 41);
  const LabelledRows truth = write_multi_label_jsonl(eval, 100, 42);
  fs::path out = dir / "out";
  testing::CommandResult trained = run_kiln(
      "train " + model + " --train_file " + train.string() + " --validation_file " +
      eval.string() + " --output_dir " + out.string() +
      " --max_seq_length 16 --per_device_train_batch_size 8 --learning_rate 1e-2"
      " --num_train_epochs 4 --do_eval --save_strategy no --report_to none --disable_tqdm"
      " --seed 3");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const nlohmann::json config = testing::read_json(out / "config.json");
  EXPECT_EQ(config["problem_type"], "multi_label_classification");
  EXPECT_EQ(config["id2label"], (nlohmann::json{{"0", "neg"}, {"1", "pos"}}));

  // Trivial predictors on the evaluation rows: the most common label set for every row (subset
  // accuracy), and every label for every row (micro F1 = 2p / (1 + p), p the share of true
  // row-label pairs).
  std::map<std::set<std::string>, int64_t> set_counts;
  double true_pairs = 0;
  for (const auto& labels : truth.labels) {
    ++set_counts[labels];
    true_pairs += static_cast<double>(labels.size());
  }
  int64_t most_common = 0;
  for (const auto& [labels, count] : set_counts) most_common = std::max(most_common, count);
  const double share = true_pairs / 200.0;
  const nlohmann::json metrics = testing::read_json(out / "eval_results.json");
  EXPECT_GT(metrics["eval_accuracy"].get<double>(), most_common / 100.0 + 0.1) << metrics;
  EXPECT_GT(metrics["eval_f1"].get<double>(), 2 * share / (1 + share) + 0.05) << metrics;
  EXPECT_GT(metrics["eval_f1_macro"].get<double>(), 0.0) << metrics;

  testing::CommandResult predicted =
      run_kiln("predict --model_name_or_path " + out.string() + " --test_file " + eval.string() +
               " --max_seq_length 16 --output_dir " + (dir / "predict").string());
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  std::vector<std::string> lines;
  std::istringstream jsonl(testing::read_text(dir / "predict" / "predict_results.jsonl"));
  for (std::string line; std::getline(jsonl, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 100u);
  int64_t exact = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json line = nlohmann::json::parse(lines[i]);
    const auto chosen = line["prediction"].get<std::set<std::string>>();
    exact += chosen == truth.labels[i];
    for (const auto& [name, probability] : line["probabilities"].items()) {
      EXPECT_EQ(chosen.contains(name), probability.get<double>() > 0.5) << lines[i];
    }
  }
  // The label sets predict writes are the ones the evaluation scored.
  EXPECT_NEAR(exact / 100.0, metrics["eval_accuracy"].get<double>(), 1e-9);
  const std::string text = testing::read_text(dir / "predict" / "predict_results.txt");
  EXPECT_EQ(text.rfind("index\tprediction\n0\t[", 0), 0u) << text;
}

}  // namespace
}  // namespace kiln
