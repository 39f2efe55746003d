// Kiln's Trainer against transformers' Trainer on the same tiny model and data: the first 20
// logged losses, gradient norms and learning rates (AdamW, linear warmup, clipping, weight
// decay; dropout off, file order). Reference numbers: tests/data/trainer/hf_20_steps.json, made
// by tests/fixtures_gen/hf_trainer_reference.py (part a).
#include <gtest/gtest.h>

#include <numeric>

#include "kiln/models/bert_config.h"
#include "kiln/io/json_util.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(KILN_SOURCE_DIR) / "tests/data/trainer";

TEST(TrainerHfParity, First20StepsMatchTransformersTrainer) {
  nlohmann::json expected =
      json_parse(testing::read_text(kData / "hf_20_steps.json"), "hf_20_steps.json");
  const fs::path model = kData / "tiny_init";

  ClassificationDataset all = testing::load_sentiment(
      fs::path(KILN_SOURCE_DIR) / "data/classification/uci-sentiment.tsv");
  std::vector<size_t> first(160);
  std::iota(first.begin(), first.end(), 0);
  ClassificationDataset train = dataset_subset(all, first);

  TrainingArguments args = testing::tiny_args(testing::scratch_folder());
  const nlohmann::json& hf = expected["arguments"];
  args.per_device_train_batch_size = hf["per_device_train_batch_size"];
  args.learning_rate = hf["learning_rate"];
  args.weight_decay = hf["weight_decay"];
  args.warmup_steps = hf["warmup_steps"];
  args.max_grad_norm = hf["max_grad_norm"];
  args.max_steps = hf["max_steps"];
  args.seed = hf["seed"];
  args.max_seq_length = hf["max_seq_length"].get<int64_t>();
  args.train_sampling_strategy = "sequential";
  training_arguments_post_init(args);

  std::unique_ptr<Backend> backend = make_reference_backend();
  std::ostringstream log;
  Trainer trainer(args, bert_config_read((model / "config.json").string()),
                  testing::read_weights(model / "model.safetensors"),
                  tokenizer_load(model.string()), *backend, log);
  trainer.train(train, nullptr);

  std::vector<nlohmann::json> steps;
  for (const nlohmann::json& entry : trainer.state().log_history) {
    if (entry.contains("loss")) steps.push_back(entry);
  }
  ASSERT_EQ(steps.size(), expected["loss"].size()) << log.str();
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i + 1));
    EXPECT_EQ(steps[i]["step"], static_cast<int64_t>(i + 1));
    EXPECT_NEAR(steps[i]["loss"].get<double>(), expected["loss"][i].get<double>(), 1e-4);
    double norm = expected["grad_norm"][i];
    EXPECT_NEAR(steps[i]["grad_norm"].get<double>(), norm, 1e-4 * std::max(1.0, norm));
    EXPECT_NEAR(steps[i]["learning_rate"].get<double>(), expected["learning_rate"][i].get<double>(),
                1e-12);
  }
}

}  // namespace
}  // namespace kiln
