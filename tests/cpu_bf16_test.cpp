// --bf16 on the CPU backend, on each of its two paths (bf16 products where the CPU has bf16 units;
// else f32 products of operands rounded to bf16), both forced here so that either runs on any CPU:
// a BERT-tiny training step equals the reference backend's bf16 step (which rounds, then
// multiplies) far more closely than the f32 step does, and rounding in f32 takes no kernel more
// than bf16 products do (the round trips run in the loops that make their operands).
#include <cmath>

#include "compiler_test_util.h"

namespace kiln {
namespace {

CompileOptions bf16_options() {
  CompileOptions options;
  options.bf16 = true;
  return options;
}

// Output i of `minuend` - `subtrahend`, in double.
std::vector<double> difference(const std::vector<Tensor>& minuend,
                               const std::vector<Tensor>& subtrahend, size_t i) {
  std::vector<double> values(static_cast<size_t>(minuend[i].numel()));
  for (size_t j = 0; j < values.size(); ++j) {
    values[j] = minuend[i].get(static_cast<int64_t>(j)) - subtrahend[i].get(static_cast<int64_t>(j));
  }
  return values;
}

// An SGD step of BERT tiny (no slots: after the four scalars, the outputs are the parameters) at
// learning rate 1, so that each parameter moves by its clipped gradient, far above the rounding
// of the f32 parameters themselves; its outputs in f32 and bf16 on the reference backend.
struct SgdStep {
  testing::BertTinyUpdate update{2, 8, bf16_options(), OptimizerConfig{.name = "sgd"}};
  std::vector<Tensor> arguments;
  std::vector<Tensor> reference_f32, reference_bf16;

  SgdStep() {
    const testing::RecordedProgram& recorded = update.program();
    const Graph& graph = *recorded.graph;
    for (size_t i = 0; i < recorded.arguments.size(); ++i) {
      const bool learning_rate =
          graph.input_name(graph.inputs()[i]) == "optimizer.learning_rate";
      arguments.push_back(learning_rate ? Tensor::scalar(DType::f32, 1.0)
                                        : recorded.arguments[i].clone());
    }
    reference_f32 = run(*make_reference_backend(), false);
    reference_bf16 = run(*make_reference_backend(), true);
  }

  std::vector<Tensor> run(Backend& backend, bool bf16) const {
    const testing::RecordedProgram& recorded = update.program();
    CompileSpec spec{bf16 ? recorded.spec.options : CompileOptions{}, {}};
    return backend.compile(*recorded.graph, recorded.outputs, spec)->run(arguments);
  }
};

const SgdStep& sgd_step() {
  static const SgdStep step;
  return step;
}

// The parameter of CpuBf16: CpuBackendOptions::bf16_products.
class CpuBf16 : public ::testing::TestWithParam<bool> {};

// What bf16 changes in the step (the loss, the gradient norm, every parameter's step) on the CPU
// backend is what it changes on the reference backend, which rounds the operands to bf16 and
// multiplies exactly: to half of that change, so that multiplying unrounded operands (no change
// at all) fails. Differences, not values, are compared: the CPU's own f32 kernels (erf, exp, the
// order of sums) move the loss as much as bf16 does. They also move operands across bf16 rounding
// boundaries, so the changes differ by a fifth (0.2 measured, on both paths alike).
TEST_P(CpuBf16, TrainingStepChangesAsTheReferenceBackendsBf16Step) {
  const SgdStep& step = sgd_step();
  std::unique_ptr<Backend> cpu = make_cpu_backend({.bf16_products = GetParam()});
  std::vector<Tensor> cpu_f32 = step.run(*cpu, false);
  std::vector<Tensor> cpu_bf16 = step.run(*cpu, true);
  ASSERT_EQ(cpu_bf16.size(), 4 + step.update.parameter_count);
  double change = 0.0, error = 0.0;  // squared norms over the loss, the norm and the parameters
  for (size_t i = 0; i < cpu_bf16.size(); ++i) {
    if (i == 2 || i == 3) continue;  // the finite flag and the update count
    std::vector<double> expected = difference(step.reference_bf16, step.reference_f32, i);
    std::vector<double> actual = difference(cpu_bf16, cpu_f32, i);
    for (size_t j = 0; j < expected.size(); ++j) {
      change += expected[j] * expected[j];
      error += (actual[j] - expected[j]) * (actual[j] - expected[j]);
    }
  }
  EXPECT_GT(change, 0.0);
  EXPECT_LT(std::sqrt(error), 0.5 * std::sqrt(change));
}

INSTANTIATE_TEST_SUITE_P(BothPaths, CpuBf16, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Bf16Products" : "RoundedF32Products";
                         });

TEST(CpuBf16, RoundingTakesNoKernelMoreThanBf16Products) {
  testing::BertTinyUpdate update(2, 8, bf16_options());
  const testing::RecordedProgram& recorded = update.program();
  CompileSpec spec{recorded.spec.options, recorded.spec.donations};
  auto kernels = [&](bool bf16_products) {
    std::unique_ptr<Executable> executable = make_cpu_backend({.bf16_products = bf16_products})
                                                 ->compile(*recorded.graph, recorded.outputs, spec);
    return dynamic_cast<const CpuExecutable&>(*executable).kernel_count();
  };
  EXPECT_EQ(kernels(false), kernels(true));
}

}  // namespace
}  // namespace kiln
