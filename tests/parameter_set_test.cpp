// ParameterSet::initialize draws the parameters on several threads at once: each must hold
// exactly what its own Philox stream gives, and a failure must name the first failing parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "kiln/ir/error.h"
#include "kiln/nn/init.h"
#include "kiln/nn/parameter_set.h"

namespace kiln {
namespace {

void expect_same_bits(const Tensor& actual, const Tensor& expected, const std::string& name) {
  ASSERT_EQ(actual.shape(), expected.shape()) << name;
  ASSERT_EQ(actual.dtype(), expected.dtype()) << name;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    ASSERT_EQ(actual.get(i), expected.get(i)) << name << " element " << i;
  }
}

TEST(ParameterSet, EachParameterHoldsItsOwnStreamWhicheverThreadDrewIt) {
  Graph graph;
  ParameterSet params(graph);
  // More parameters than threads, of uneven sizes (odd counts end mid Philox block), and every
  // init rule between the normal ones.
  params.add("embeddings", {61, 16}, ParameterInit::normal(0.02, 0), false);
  params.add("bias", {16}, ParameterInit::zeros(), false);
  params.add("dense", {16, 33}, ParameterInit::normal(0.5), true);
  params.add("norm", {33}, ParameterInit::ones(), false);
  params.add("positions", {12, 16}, ParameterInit::sinusoidal(), false);
  for (int i = 0; i < 9; ++i) {
    params.add("layer." + std::to_string(i), {7 + i, 5}, ParameterInit::normal(1.0), true);
  }
  params.initialize(1234);

  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& param = params.parameters()[i];
    if (param.init.kind != ParameterInit::Kind::normal) continue;
    Tensor expected = init_normal(DType::f32, param.value.shape(), param.init.stddev, 1234,
                                  static_cast<uint32_t>(i));
    if (param.init.zero_row) {
      int64_t width = param.value.shape()[1];
      for (int64_t j = 0; j < width; ++j) expected.set(*param.init.zero_row * width + j, 0.0);
    }
    expect_same_bits(param.tensor, expected, param.name);
  }
  const Tensor& norm = params.get("norm").tensor;
  for (int64_t i = 0; i < norm.numel(); ++i) EXPECT_EQ(norm.get(i), 1.0);
  const Tensor& bias = params.get("bias").tensor;
  for (int64_t i = 0; i < bias.numel(); ++i) EXPECT_EQ(bias.get(i), 0.0);
  // Row 1, column 1 of the sinusoidal table: cos(1 / 10000^0).
  EXPECT_EQ(params.get("positions").tensor.get(16 + 1), static_cast<float>(std::cos(1.0)));
}

TEST(ParameterSet, AFailedInitializationNamesTheFirstFailingParameter) {
  Graph graph;
  ParameterSet params(graph);
  for (int i = 0; i < 8; ++i) {
    // Parameters 3 and 6 name a padding row they do not have.
    bool bad = i == 3 || i == 6;
    params.add("table." + std::to_string(i), {4, 2},
               ParameterInit::normal(0.02, bad ? std::optional<int64_t>(9) : std::nullopt),
               false);
  }
  try {
    params.initialize(1);
    FAIL() << "initialize accepted a padding row outside the table";
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("'table.3'"), std::string::npos) << message;
    EXPECT_NE(message.find("no row 9"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kiln
