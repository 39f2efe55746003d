// `kiln demo`: a two-layer network learns two interleaved spirals (generated data), trained by a
// compiled graph step (forward, backward, AdamW) on the reference backend.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <numbers>
#include <string>

#include "commands.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/nn/init.h"
#include "kiln/train/train_step.h"

namespace kiln::cli {
namespace {

struct DemoOptions {
  int64_t points = 256;
  int64_t hidden = 64;
  int64_t steps = 800;
  double learning_rate = 0.03;
  int64_t seed = 42;
};

// Two spirals of points/2 each, with a little Philox noise; labels 0 and 1.
void make_spirals(const DemoOptions& options, Tensor& features, Tensor& labels) {
  Tensor noise = init_uniform(DType::f64, {options.points, 2}, 0.05, options.seed, 99);
  for (int64_t i = 0; i < options.points; ++i) {
    int64_t label = i % 2;
    double t = 0.25 + 2.5 * static_cast<double>(i / 2) / static_cast<double>(options.points / 2);
    double angle = t * 1.75 * std::numbers::pi + static_cast<double>(label) * std::numbers::pi;
    features.set(2 * i, t * std::cos(angle) + noise.get(2 * i));
    features.set(2 * i + 1, t * std::sin(angle) + noise.get(2 * i + 1));
    labels.set(i, static_cast<double>(label));
  }
}

void run_demo(const DemoOptions& options) {
  Graph graph;
  Value x = graph.input("features", DType::f32, {options.points, 2});
  Value y = graph.input("labels", DType::i32, {options.points});
  Value w1 = graph.input("fc1.weight", DType::f32, {2, options.hidden}, InputRole::weight);
  Value b1 = graph.input("fc1.bias", DType::f32, {options.hidden}, InputRole::weight);
  Value w2 = graph.input("fc2.weight", DType::f32, {options.hidden, 2}, InputRole::weight);
  Value b2 = graph.input("fc2.bias", DType::f32, {2}, InputRole::weight);
  Value logits = matmul(tanh(matmul(x, w1) + b1), w2) + b2;
  Value loss = cross_entropy(logits, y);

  double bound1 = 1.0 / std::sqrt(2.0), bound2 = 1.0 / std::sqrt(double(options.hidden));
  auto backend = make_reference_backend();
  Runtime runtime(*backend);
  TrainState state(
      runtime,
      {{"fc1.weight", init_uniform(DType::f32, {2, options.hidden}, bound1, options.seed, 1)},
       {"fc1.bias", init_uniform(DType::f32, {options.hidden}, bound1, options.seed, 2)},
       {"fc2.weight", init_uniform(DType::f32, {options.hidden, 2}, bound2, options.seed, 3)},
       {"fc2.bias", init_uniform(DType::f32, {2}, bound2, options.seed, 4)}});
  TrainStep step(graph, loss, {w1, b1, w2, b2}, {true, false, true, false},
                 TrainStepConfig{.optimizer = {.weight_decay = 0.01}}, runtime);

  Tensor features(DType::f32, {options.points, 2});
  Tensor labels(DType::i32, {options.points});
  make_spirals(options, features, labels);
  const TensorMap feeds = {{"features", features}, {"labels", labels}};

  std::cout << "kiln demo: 2-layer MLP (2 -> " << options.hidden << " tanh -> 2) on "
            << options.points << " spiral points, AdamW lr " << options.learning_rate << ", "
            << backend->name() << " backend\n";
  double first_loss = 0.0, loss_value = 0.0;
  for (int64_t i = 0; i < options.steps; ++i) {
    loss_value = step.update(state, {feeds}, options.learning_rate).result().loss;
    if (i == 0) first_loss = loss_value;
    if (i % 20 == 0 || i == options.steps - 1) {
      int bar = static_cast<int>(std::lround(50.0 * loss_value / first_loss));
      std::cout << "step " << std::setw(4) << i << "  loss " << std::fixed << std::setprecision(4)
                << loss_value << "  " << std::string(static_cast<size_t>(std::max(bar, 0)), '#')
                << '\n';
    }
  }

  // Accuracy of the trained network, evaluated by a separate forward-only program.
  Value predicted = ge(slice(logits, {0, 1}, {options.points, 2}),
                       slice(logits, {0, 0}, {options.points, 1}));
  Value correct = eq(cast(reshape(predicted, {options.points}), DType::i32), y);
  Value accuracy = mean(cast(correct, DType::f32));
  double accuracy_value = step.evaluate(state, {accuracy}, feeds)[0].get(0);
  std::cout << "final loss " << loss_value << " (from " << first_loss << "), training accuracy "
            << accuracy_value << '\n';
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand("demo", "Train a two-layer network on generated spirals");
  demo->add_option("--steps", options->steps, "training steps")->check(CLI::PositiveNumber);
  demo->add_option("--hidden", options->hidden, "hidden units")->check(CLI::PositiveNumber);
  demo->add_option("--learning_rate", options->learning_rate, "AdamW learning rate");
  demo->add_option("--seed", options->seed, "seed for weights and data");
  demo->footer("Example: kiln demo --steps 200 --hidden 32");
  demo->callback([options] { run_demo(*options); });
}

}  // namespace kiln::cli
