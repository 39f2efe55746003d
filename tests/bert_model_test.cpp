// Golden tests against transformers: for each fixture model, Kiln's BertForSequenceClassification
// (reference backend, f32) reproduces the logits, the loss and every parameter gradient.
//
// Tolerance, per tensor e (expected) and a (Kiln): max |a - e| <= 1e-5 max|e|, i.e. 1e-5 relative
// measured against the tensor's scale (torch's f32 rounding noise is relative to the sums behind
// an element, not to a small result). The attention key biases have an exact gradient of zero
// (softmax ignores a constant shift), so torch's value is pure noise; their scale is taken from the
// query bias gradient. torch's own f32 error against f64 on these fixtures is up to 9e-6 (the
// generator prints it); Kiln's reference backend computes in double, rounding each op to f32.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "bert_test_util.h"
#include "kiln/autodiff/grad.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/models/bert_pretrained.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::BertFixture;

double max_abs(const Tensor& t) {
  double out = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) out = std::max(out, std::fabs(t.get(i)));
  return out;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  double out = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i) out = std::max(out, std::fabs(a.get(i) - b.get(i)));
  return out;
}

// The scale an element's absolute tolerance is measured against.
double tensor_scale(const BertFixture& fixture, const std::string& name) {
  std::string key = name;
  if (size_t at = key.find("attention.self.key.bias"); at != std::string::npos) {
    key.replace(at, std::string("attention.self.key.bias").size(), "attention.self.query.bias");
  }
  return max_abs(fixture.expected.at(key));
}

class BertGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(BertGolden, LogitsLossAndEveryGradientMatchTransformers) {
  BertFixture fixture = testing::load_bert_fixture(GetParam());
  Graph graph;
  BertClassifier model = bert_for_sequence_classification(graph, fixture.config, fixture.options);
  bert_load_weights(model.params, fixture.dir);
  std::vector<Value> grads = grad(model.loss, model.params.values());

  std::vector<Value> outputs = {model.logits, model.loss};
  std::vector<std::string> names = {"logits", "loss"};
  for (size_t i = 0; i < grads.size(); ++i) {
    outputs.push_back(grads[i]);
    names.push_back("grad." + model.params.parameters()[i].name);
  }
  std::vector<Tensor> results =
      evaluate_reference(graph, outputs, model.params.arguments(fixture.feeds()));

  ASSERT_EQ(results.size(), names.size());
  double worst = 0.0;
  std::string worst_name;
  for (size_t i = 0; i < results.size(); ++i) {
    const Tensor& expected = fixture.expected.at(names[i]);
    double scale = tensor_scale(fixture, names[i]);
    std::string mismatch = testing::compare_tensors(results[i], expected, 0.0, 1e-5 * scale);
    EXPECT_TRUE(mismatch.empty()) << names[i] << ": " << mismatch;
    double relative = max_abs_diff(results[i], expected) / scale;
    if (relative > worst) worst = relative, worst_name = names[i];
  }
  std::cout << GetParam() << ": max |kiln - torch| / max|torch| = " << worst << " (" << worst_name
            << "), loss " << results[1].get(0) << " vs " << fixture.expected.at("loss").get(0)
            << '\n';
  EXPECT_EQ(model.problem_type, GetParam() == "regression"    ? "regression"
                                : GetParam() == "multi_label" ? "multi_label_classification"
                                                              : "single_label_classification");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BertGolden, ::testing::ValuesIn(testing::kBertFixtures),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln
