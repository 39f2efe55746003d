// The step programs: global-norm clipping against a hand computation, gradient accumulation
// against one batch of twice the size, and padded batches against the unpadded examples.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/io/collate.h"
#include "kiln/ir/ops.h"
#include "kiln/train/trainer_programs.h"
#include "kiln/train/training_arguments.h"
#include "support/testing.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// loss = sum(w1 * x1) + sum(w2 * x2): the gradients are x1 and x2, so everything is known.
struct LinearModel {
  Graph graph;
  Value w1, w2, loss;
  std::unique_ptr<Backend> backend = make_reference_backend();
  Runtime runtime{*backend};
  TensorMap feeds = {{"x1", Tensor::from_doubles(DType::f32, {3}, {3, 0, 4})},
                     {"x2", Tensor::from_doubles(DType::f32, {2}, {0, 12})}};

  LinearModel() {
    Value x1 = graph.input("x1", DType::f32, {3});
    Value x2 = graph.input("x2", DType::f32, {2});
    w1 = graph.input("w1", DType::f32, {3}, InputRole::weight);
    w2 = graph.input("w2", DType::f32, {2}, InputRole::weight);
    loss = reduce_sum(w1 * x1) + reduce_sum(w2 * x2);
  }

  // One update from zero weights; returns the state after it.
  TrainState update(double max_grad_norm, StepResult& result) {
    TrainStepConfig config;
    config.max_grad_norm = max_grad_norm;
    TrainStep step(graph, loss, {w1, w2}, {true, true}, config, runtime);
    TrainState state(runtime, {{"w1", Tensor(DType::f32, {3})}, {"w2", Tensor(DType::f32, {2})}});
    result = step.update(state, {feeds}, 0.1).result();
    return state;
  }
};

TEST(TrainerStep, ClippingScalesGradientsToTheGlobalNorm) {
  const std::vector<double> g1 = {3, 0, 4}, g2 = {0, 12};  // global norm sqrt(25 + 144) = 13
  for (double max_norm : {1.0, 6.5, 100.0, 0.0}) {
    SCOPED_TRACE("max_grad_norm " + std::to_string(max_norm));
    LinearModel model;
    StepResult result;
    TrainState state = model.update(max_norm, result);
    EXPECT_FLOAT_EQ(result.grad_norm, 13.0);  // logged before clipping
    // torch.nn.utils.clip_grad_norm_: coef = min(max_norm / (norm + 1e-6), 1); 0 turns it off.
    double coef = max_norm > 0 ? std::min(max_norm / (13.0 + 1e-6), 1.0) : 1.0;
    // AdamW's first moment after one update is (1 - beta1) times the gradient it used.
    for (size_t i = 0; i < g1.size(); ++i) {
      EXPECT_NEAR(state.optimizer().slots.at("w1.exp_avg").get(static_cast<int64_t>(i)), 0.1 * g1[i] * coef,
                  1e-6);
    }
    for (size_t i = 0; i < g2.size(); ++i) {
      EXPECT_NEAR(state.optimizer().slots.at("w2.exp_avg").get(static_cast<int64_t>(i)), 0.1 * g2[i] * coef,
                  1e-6);
      EXPECT_NEAR(state.optimizer().slots.at("w2.exp_avg_sq").get(static_cast<int64_t>(i)),
                  0.001 * std::pow(g2[i] * coef, 2), 1e-6);
    }
    EXPECT_EQ(state.optimizer().step, 1);
  }
}

TEST(TrainerStep, AccumulatedGradientsMatchOneBatchOfTwiceTheSize) {
  fs::path dir = testing::scratch_folder();
  ClassificationDataset data =
      testing::load_sentiment(testing::write_sentiment_tsv(dir / "train.tsv", 24, 4));
  auto losses_of = [&](int64_t batch, int64_t accumulation, const std::string& name) {
    TrainingArguments args = testing::tiny_args(dir / name);
    args.per_device_train_batch_size = batch;
    args.gradient_accumulation_steps = accumulation;
    args.num_train_epochs = 2;
    args.learning_rate = 3e-3;
    args.weight_decay = 0.01;
    auto run = std::make_unique<testing::TinyRun>(dir / name, args);  // dropout off
    run->trainer->train(data, nullptr);
    return run;
  };
  auto accumulated = losses_of(4, 2, "accumulated");
  auto single = losses_of(8, 1, "single");
  const TrainerState& a = accumulated->trainer->state();
  const TrainerState& b = single->trainer->state();
  EXPECT_EQ(a.global_step, 6);
  ASSERT_EQ(a.global_step, b.global_step);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(a.log_history[i]["loss"].get<double>(), b.log_history[i]["loss"].get<double>(),
                1e-4);
    EXPECT_NEAR(a.log_history[i]["grad_norm"].get<double>(),
                b.log_history[i]["grad_norm"].get<double>(), 1e-5);
  }
  for (const auto& [name, value] : accumulated->trainer->weights()) {
    SCOPED_TRACE(name);
    EXPECT_ALLCLOSE(value, single->trainer->weights().at(name), 1e-4, 1e-5);
  }
  // One program per bucket for micro-batches (accumulate and update), not one per batch.
  EXPECT_LE(accumulated->trainer->compiles(), 4);
}

// A short batch padded with ignored rows gives the loss and logits of the real rows alone.
void expect_padding_changes_nothing(const fs::path& tsv, const BertConfig& config) {
  ClassificationDataset data = testing::load_sentiment(tsv);
  Tokenizer tokenizer = tokenizer_load_vocab((tsv.parent_path() / "vocab.txt").string());
  std::vector<Encoding> encodings = encode_dataset(tokenizer, data, 16);
  auto backend = make_reference_backend();
  Runtime runtime(*backend);
  TrainState weights(runtime, testing::initial_weights(config, 11));
  ModelPrograms programs(ModelHead::sequence_classification, config, TrainStepConfig{}, runtime,
                         TrainingArguments{}.mlm_probability);  // unused by classification
  const bool integer_labels = data.label_kind == LabelKind::classes;
  auto run = [&](size_t batch_size) {
    CollateOptions options;
    options.batch_size = batch_size;
    options.max_seq_length = 16;
    const std::vector<size_t> indices = {0, 1, 2};
    Batch batch = collate_batch(encodings, data, indices, options);
    TensorMap feeds = {{"input_ids", batch.input_ids},
                       {"token_type_ids", batch.token_type_ids},
                       {"attention_mask", batch.attention_mask},
                       {"labels", *batch.labels}};
    return programs.forward(weights, feeds, true, integer_labels);
  };
  std::vector<Tensor> exact = run(3), padded = run(5);
  EXPECT_NEAR(padded[1].get(0), exact[1].get(0), 1e-6);
  const int64_t real = 3 * config.num_labels();
  for (int64_t i = 0; i < real; ++i) EXPECT_NEAR(padded[0].get(i), exact[0].get(i), 1e-6);
}

TEST(TrainerStep, PaddedClassificationBatchGivesTheUnpaddedLoss) {
  fs::path dir = testing::scratch_folder();
  fs::path vocab = testing::write_vocab(dir);
  Tokenizer tokenizer = tokenizer_load_vocab(vocab.string());
  expect_padding_changes_nothing(testing::write_sentiment_tsv(dir / "data.tsv", 3, 1),
                                 testing::tiny_config(tokenizer.vocab_size()));
}

TEST(TrainerStep, PaddedRegressionBatchGivesTheUnpaddedLoss) {
  fs::path dir = testing::scratch_folder();
  fs::path vocab = testing::write_vocab(dir);
  Tokenizer tokenizer = tokenizer_load_vocab(vocab.string());
  testing::write_text(dir / "data.tsv",
                      "0.5\ts\tgood movie\n-1.25\ts\tbad food was sad\n2.0\ts\tgreat plot\n");
  BertConfig config = testing::tiny_config(tokenizer.vocab_size());
  config.set_num_labels(1);
  expect_padding_changes_nothing(dir / "data.tsv", config);
}

TEST(TrainerStep, PaddedMultiLabelBatchGivesTheUnpaddedLoss) {
  fs::path dir = testing::scratch_folder();
  fs::path vocab = testing::write_vocab(dir);
  Tokenizer tokenizer = tokenizer_load_vocab(vocab.string());
  testing::write_text(dir / "data.tsv", "[\"pos\"]\ts\tgood movie\n[\"neg\", \"pos\"]\ts\tbad food"
                                        " was great\n[]\ts\tthe plot\n");
  BertConfig config = testing::tiny_config(tokenizer.vocab_size());
  config.problem_type = "multi_label_classification";
  expect_padding_changes_nothing(dir / "data.tsv", config);
}

TEST(TrainerStep, EvaluationLossIsTheMeanOverRealExamples) {
  fs::path dir = testing::scratch_folder();
  ClassificationDataset data =
      testing::load_sentiment(testing::write_sentiment_tsv(dir / "eval.tsv", 7, 2));
  auto evaluate = [&](int64_t batch) {
    TrainingArguments args = testing::tiny_args(dir / "out");
    args.per_device_eval_batch_size = batch;
    testing::TinyRun run(dir, args);
    return run.trainer->evaluate(data);
  };
  nlohmann::json padded = evaluate(4), whole = evaluate(7);
  EXPECT_NEAR(padded["eval_loss"].get<double>(), whole["eval_loss"].get<double>(), 1e-6);
  EXPECT_EQ(padded["eval_accuracy"], whole["eval_accuracy"]);
  EXPECT_EQ(padded["eval_steps_per_second"].is_number(), true);
}

}  // namespace
}  // namespace kiln
