// The BERT graph itself: a stable fingerprint, dropout that depends on (seed, offset) only in
// training, HF's init rules, i32 indices, and a few training steps through TrainStep.
#include <gtest/gtest.h>

#include <cmath>

#include "bert_test_util.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert_pretrained.h"
#include "kiln/nn/activation.h"
#include "kiln/train/dropout_keys.h"
#include "kiln/train/train_step.h"

namespace kiln {
namespace {

using testing::BertFixture;

struct Built {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  BertClassifier model;
  Built(const BertFixture& fixture, const BertConfig& config, BertBuildOptions options)
      : model(bert_for_sequence_classification(*graph, config, options)) {
    bert_load_weights(model.params, fixture.dir);
  }
  // Logits for the fixture's batch; `extra` adds feeds (dropout seed and offset).
  Tensor logits(const BertFixture& fixture, std::map<std::string, Tensor> extra = {}) const {
    std::map<std::string, Tensor> feeds = fixture.feeds();
    feeds.insert(extra.begin(), extra.end());
    return evaluate_reference(*graph, {model.logits}, model.params.arguments(feeds))[0];
  }
};

// The dropout inputs of micro-step `step` of the fixture's batch.
std::map<std::string, Tensor> dropout_feeds(const BertFixture& fixture, int64_t seed,
                                            int64_t step) {
  int64_t batch = fixture.options.batch_size;
  return {{"dropout_seed", Tensor::scalar(DType::i64, static_cast<double>(seed))},
          {"dropout_offset", dropout_row_keys(step, batch, 0, batch)}};
}

BertBuildOptions training(BertBuildOptions options) {
  options.training = true;
  return options;
}

TEST(BertGraph, FingerprintIsStableAcrossBuilds) {
  BertFixture fixture = testing::load_bert_fixture("odd_heads");
  auto fingerprint = [&](const BertConfig& config, const BertBuildOptions& options) {
    Graph graph;
    BertClassifier model = bert_for_sequence_classification(graph, config, options);
    return graph_fingerprint(graph, {model.logits, model.loss});
  };
  uint64_t first = fingerprint(fixture.config, fixture.options);
  EXPECT_EQ(fingerprint(fixture.config, fixture.options), first);
  EXPECT_EQ(fingerprint(fixture.config, training(fixture.options)),
            fingerprint(fixture.config, training(fixture.options)));
  EXPECT_NE(fingerprint(fixture.config, training(fixture.options)), first);
  BertConfig other_eps = fixture.config;
  other_eps.layer_norm_eps = 1e-6;
  EXPECT_NE(fingerprint(other_eps, fixture.options), first);
  BertBuildOptions longer = fixture.options;
  longer.seq_len += 1;
  EXPECT_NE(fingerprint(fixture.config, longer), first);
}

TEST(BertGraph, DropoutInTrainingDependsOnSeedAndOffset) {
  BertFixture fixture = testing::load_bert_fixture("tiny");
  Built eval(fixture, fixture.config, fixture.options);
  Built train(fixture, fixture.config, training(fixture.options));
  // Embeddings, then per layer attention probabilities, attention output and FFN output, then
  // the classifier: one stream each.
  EXPECT_EQ(train.model.dropout.sites(), 2u + 3u * 2u);
  EXPECT_FALSE(eval.model.dropout.training());

  std::vector<double> reference = eval.logits(fixture).to_doubles();
  std::vector<double> a = train.logits(fixture, dropout_feeds(fixture, 1, 0)).to_doubles();
  EXPECT_NE(a, reference);
  EXPECT_EQ(train.logits(fixture, dropout_feeds(fixture, 1, 0)).to_doubles(), a);
  EXPECT_NE(train.logits(fixture, dropout_feeds(fixture, 2, 0)).to_doubles(), a);
  EXPECT_NE(train.logits(fixture, dropout_feeds(fixture, 1, 1)).to_doubles(), a);
  for (double value : a) EXPECT_TRUE(std::isfinite(value));
}

// Training with every rate at zero takes the spelled-out attention path; it must equal the
// attention composite of evaluation.
TEST(BertGraph, TrainingWithoutDropoutEqualsEvaluation) {
  BertFixture fixture = testing::load_bert_fixture("odd_heads");
  BertConfig config = fixture.config;
  config.hidden_dropout_prob = 0.0;
  config.attention_probs_dropout_prob = 0.0;
  config.classifier_dropout = 0.0;
  Built eval(fixture, config, fixture.options);
  Built train(fixture, config, training(fixture.options));
  Tensor expected = eval.logits(fixture);
  Tensor actual = train.logits(fixture, dropout_feeds(fixture, 5, 3));
  for (int64_t i = 0; i < expected.numel(); ++i) {
    EXPECT_NEAR(actual.get(i), expected.get(i), 1e-6 * std::fabs(expected.get(i)) + 1e-7);
  }
}

TEST(BertGraph, InitializeFollowsTransformersRules) {
  BertFixture fixture = testing::load_bert_fixture("tiny");
  auto build = [&](Graph& graph) {
    BertClassifier model = bert_for_sequence_classification(graph, fixture.config, fixture.options);
    model.params.initialize(11);
    return model.params.state_dict();
  };
  Graph g1, g2;
  std::map<std::string, Tensor> params = build(g1);
  EXPECT_EQ(build(g2).at("bert.encoder.layer.1.output.dense.weight").to_doubles(),
            params.at("bert.encoder.layer.1.output.dense.weight").to_doubles());
  for (const auto& [name, tensor] : params) {
    std::vector<double> values = tensor.to_doubles();
    if (name.find("LayerNorm.weight") != std::string::npos) {
      EXPECT_EQ(values, std::vector<double>(values.size(), 1.0)) << name;
    } else if (name.ends_with(".bias")) {
      EXPECT_EQ(values, std::vector<double>(values.size(), 0.0)) << name;
    } else {
      double sum = 0.0, squares = 0.0;
      for (double v : values) sum += v, squares += v * v;
      double n = static_cast<double>(values.size());
      double stddev = std::sqrt(squares / n - (sum / n) * (sum / n));
      EXPECT_NEAR(stddev, fixture.config.initializer_range, 0.2 * fixture.config.initializer_range)
          << name;
    }
  }
  const Tensor& word = params.at("bert.embeddings.word_embeddings.weight");
  for (int64_t j = 0; j < fixture.config.hidden_size; ++j) EXPECT_EQ(word.get(j), 0.0);  // pad row
  EXPECT_NE(word.get(fixture.config.hidden_size), 0.0);
  EXPECT_NE(params.at("bert.encoder.layer.0.attention.self.query.weight").to_doubles(),
            params.at("bert.encoder.layer.0.attention.self.key.weight").to_doubles());
}

TEST(BertGraph, Int32IndicesGiveTheSameLogits) {
  BertFixture fixture = testing::load_bert_fixture("tiny");
  Built wide(fixture, fixture.config, fixture.options);
  BertBuildOptions options = fixture.options;
  options.index_dtype = DType::i32;
  Built narrow(fixture, fixture.config, options);
  BertFixture narrow_fixture = fixture;
  for (const char* name : {"input_ids", "token_type_ids", "attention_mask", "labels"}) {
    narrow_fixture.expected[name] = fixture.expected.at(name).cast(DType::i32);
  }
  EXPECT_EQ(narrow.logits(narrow_fixture).to_doubles(), wide.logits(fixture).to_doubles());
}

TEST(BertGraph, RejectsWhatItCannotBuild) {
  BertFixture fixture = testing::load_bert_fixture("tiny");
  Graph graph;
  BertBuildOptions options = fixture.options;
  options.seq_len = fixture.config.max_position_embeddings + 1;
  try {
    bert_for_sequence_classification(graph, fixture.config, options);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("exceeds max_position_embeddings 64"),
              std::string::npos)
        << error.what();
  }
  Graph graph2;
  Value x = graph2.input("x", DType::f32, {2});
  EXPECT_THROW(activation(x, "swish"), Error);
}

// relu's gradient at 0 is 0 as in torch; the tanh GELU matches HF's formula.
TEST(BertGraph, Activations) {
  Graph graph;
  Value x = graph.input("x", DType::f64, {3});
  Tensor input = Tensor::from_doubles(DType::f64, {3}, {-1.5, 0.0, 2.0});
  std::vector<Value> outs = {activation(x, "relu"), activation(x, "gelu_new"),
                             activation(x, "gelu")};
  std::vector<Tensor> got = evaluate_reference(graph, outs, {input});
  EXPECT_EQ(got[0].to_doubles(), (std::vector<double>{0.0, 0.0, 2.0}));
  for (int64_t i = 0; i < 3; ++i) {
    double v = input.get(i);
    double tanh_gelu =
        0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(got[1].get(i), tanh_gelu, 1e-15);
    EXPECT_NEAR(got[2].get(i), 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))), 1e-15);
  }
}

// A freshly initialised model trains through TrainStep, dropout on: feeds are the non-parameter
// inputs by name, and the loss on the fixed batch falls.
TEST(BertGraph, TrainStepLowersTheLoss) {
  BertFixture fixture = testing::load_bert_fixture("tiny");
  Graph graph;
  BertClassifier model =
      bert_for_sequence_classification(graph, fixture.config, training(fixture.options));
  model.params.initialize(7);
  auto backend = make_reference_backend();
  Runtime runtime(*backend);
  TrainStep step(graph, model.loss, model.params.values(), model.params.decay_flags(),
                 TrainStepConfig{.optimizer = {.weight_decay = 0.01}}, runtime);
  TrainState state(runtime, model.params.state_dict());
  std::vector<double> losses;
  for (int64_t i = 0; i < 16; ++i) {
    TensorMap feeds = fixture.feeds();
    feeds["dropout_seed"] = Tensor::scalar(DType::i64, 42);
    feeds["dropout_offset"] = dropout_row_keys(i, fixture.options.batch_size, 0,
                                               fixture.options.batch_size);
    losses.push_back(step.update(state, {feeds}, 5e-3).result().loss);
  }
  EXPECT_NEAR(losses.front(), std::log(3.0), 0.1);  // near-uniform logits at HF's init
  EXPECT_LT(losses.back(), 0.5 * losses.front());
  model.params.load(state.params(), "trained");
  EXPECT_NE(model.params.get("classifier.bias").tensor.to_doubles(), std::vector<double>(3, 0.0));
}

}  // namespace
}  // namespace kiln
