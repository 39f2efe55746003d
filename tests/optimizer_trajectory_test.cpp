// Every --optim against torch/transformers (tests/fixtures_gen/make_optimizer_fixtures.py): five
// updates of a 2-D decayed and a 1-D undecayed parameter with fixed gradients and a changing
// learning rate, run through TrainStep (slots, step count, donation) and matched after each step.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/ir/ops.h"
#include "kiln/train/train_step.h"
#include "kiln/train/training_arguments.h"
#include "support/testing.h"

namespace kiln {
namespace {

const std::string kFixture =
    std::string(KILN_SOURCE_DIR) + "/tests/data/optimizers/trajectories.safetensors";

struct Case {
  std::string name;
  OptimizerConfig config;
  std::vector<double> lrs;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> fixture_cases() {
  SafetensorsFile file(kFixture);
  std::vector<Case> cases;
  for (const nlohmann::json& entry : nlohmann::json::parse(file.metadata().at("cases"))) {
    TrainingArguments args;
    args.optim = entry.at("optim");
    args.optim_args = entry.at("optim_args");
    args.weight_decay = entry.at("weight_decay");
    args.adam_beta1 = entry.at("adam_beta1");
    args.adam_beta2 = entry.at("adam_beta2");
    args.adam_epsilon = entry.at("adam_epsilon");
    cases.push_back({entry.at("name"), optimizer_config(args), entry.at("lrs")});
  }
  return cases;
}

class OptimizerTrajectory : public ::testing::TestWithParam<Case> {};

TEST_P(OptimizerTrajectory, MatchesTorchEveryStep) {
  const Case& c = GetParam();
  SafetensorsFile file(kFixture);
  auto tensor = [&](const std::string& param, const std::string& what) {
    return file.to_tensor(c.name + "." + param + "." + what);
  };
  // loss = sum(w * gw) + sum(b * gb): the gradients are the fed gw and gb.
  Graph graph;
  Value w = graph.input("w", DType::f32, {3, 4}, InputRole::weight);
  Value b = graph.input("b", DType::f32, {4}, InputRole::weight);
  Value gw = graph.input("gw", DType::f32, {3, 4});
  Value gb = graph.input("gb", DType::f32, {4});
  Value loss = reduce_sum(w * gw) + reduce_sum(b * gb);
  auto backend = make_reference_backend();
  Runtime runtime(*backend);
  TrainStepConfig config;
  config.optimizer = c.config;
  config.max_grad_norm = 0.0;
  // As the Trainer groups them: the weight decays, the bias does not.
  TrainStep step(graph, loss, {w, b}, {true, false}, config, runtime);
  TrainState state(runtime, {{"w", tensor("w", "init")}, {"b", tensor("b", "init")}}, 1, c.config);
  for (size_t k = 0; k < c.lrs.size(); ++k) {
    SCOPED_TRACE("step " + std::to_string(k + 1));
    const std::string K = std::to_string(k);
    TensorMap feeds = {{"gw", tensor("w", "grad." + K)}, {"gb", tensor("b", "grad." + K)}};
    ASSERT_EQ(step.update(state, {feeds}, c.lrs[k]).result().nonfinite, "");
    TensorMap params = state.params();
    EXPECT_ALLCLOSE(params.at("w"), tensor("w", "after." + K), 1e-5, 1e-6);
    EXPECT_ALLCLOSE(params.at("b"), tensor("b", "after." + K), 1e-5, 1e-6);
  }
  EXPECT_EQ(state.optimizer().step, static_cast<int64_t>(c.lrs.size()));
}

INSTANTIATE_TEST_SUITE_P(Fixture, OptimizerTrajectory, ::testing::ValuesIn(fixture_cases()),
                         [](const auto& info) { return info.param.name; });

// The slots each optimizer keeps, by torch's names; Adafactor factors 2-D parameters.
TEST(OptimizerSlots, AreTorchsStateNames) {
  auto names = [](const OptimizerConfig& config, const Shape& shape) {
    std::vector<std::string> out;
    for (const OptimizerSlot& slot : make_optimizer(config)->slots(shape)) {
      out.push_back(slot.name + shape_str(slot.shape));
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names({}, {3, 4}), (V{"exp_avg(3,4)", "exp_avg_sq(3,4)"}));
  EXPECT_EQ(names({.name = "adafactor"}, {3, 4}), (V{"exp_avg_sq_row(3)", "exp_avg_sq_col(4)"}));
  EXPECT_EQ(names({.name = "adafactor"}, {4}), (V{"exp_avg_sq(4)"}));
  EXPECT_EQ(names({.name = "sgd"}, {4}), V{});
  EXPECT_EQ(names({.name = "sgd", .args = {{"momentum", "0.9"}}}, {4}), (V{"momentum_buffer(4)"}));
  EXPECT_EQ(names({.name = "adagrad"}, {4}), (V{"sum(4)"}));
  EXPECT_EQ(names({.name = "rmsprop", .args = {{"centered", "1"}, {"momentum", "0.1"}}}, {4}),
            (V{"square_avg(4)", "grad_avg(4)", "momentum_buffer(4)"}));
}

TEST(OptimizerArgs, ParseAsTransformersAndNameTheFlag) {
  EXPECT_EQ(parse_optim_args("momentum=0.9, nesterov=True"),
            (std::map<std::string, std::string>{{"momentum", "0.9"}, {"nesterov", "True"}}));
  EXPECT_TRUE(parse_optim_args("").empty());
  EXPECT_EQ(testing::error_of([] { parse_optim_args("momentum"); }),
            "[--optim_args] 'momentum' is not key=value");
  EXPECT_EQ(testing::error_of([] { make_optimizer({.name = "sgd", .args = {{"momentun", "1"}}}); }),
            "[--optim_args] 'momentun' is not a hyper-parameter of --optim sgd (it takes "
            "momentum, dampening, nesterov)");
  EXPECT_EQ(testing::error_of([] { make_optimizer({.name = "adafactor", .args = {{"eps", "1"}}}); }),
            "[--optim_args] 'eps' is not a hyper-parameter of --optim adafactor, which takes none");
  EXPECT_EQ(testing::error_of([] { make_optimizer({.name = "rmsprop", .args = {{"alpha", "x"}}}); }),
            "[--optim_args] alpha=x: not a number");
  EXPECT_EQ(testing::error_of([] { make_optimizer({.name = "lion"}); }),
            "[--optim] 'lion' is not one of adamw_torch, adamw_torch_fused, adafactor, sgd, "
            "adagrad, rmsprop");
}

}  // namespace
}  // namespace kiln
