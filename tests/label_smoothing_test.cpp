// --label_smoothing_factor: label_smoothed_cross_entropy's loss and its gradient with respect to
// the logits against transformers' LabelSmoother and torch's autograd, in f64, on the cases of
// tests/data/label_smoothing/cases.json (make_label_smoothing_fixtures.py): ignored labels, no
// smoothing, heavy smoothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "kiln/autodiff/grad.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/ops.h"
#include "kiln/nn/loss.h"
#include "support/testing.h"

namespace kiln {
namespace {

TEST(LabelSmoothing, MatchesTransformersLabelSmootherAndItsGradient) {
  const nlohmann::json fixture = nlohmann::json::parse(testing::read_text(
      std::string(KILN_SOURCE_DIR) + "/tests/data/label_smoothing/cases.json"));
  ASSERT_EQ(fixture["cases"].size(), 4u);
  for (const nlohmann::json& c : fixture["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto labels = c["labels"].get<std::vector<double>>();
    const auto rows = static_cast<int64_t>(labels.size());
    const int64_t classes = c["classes"];
    Graph graph;
    Value logits = graph.input("logits", DType::f64, {rows, classes});
    Value label_ids = graph.input("labels", DType::i64, {rows});
    Value loss = label_smoothed_cross_entropy(logits, label_ids, c["epsilon"].get<double>());
    std::vector<Tensor> out = evaluate_reference(
        graph, {loss, grad(loss, {logits})[0]},
        {Tensor::from_doubles(DType::f64, {rows, classes}, c["logits"].get<std::vector<double>>()),
         Tensor::from_doubles(DType::i64, {rows}, labels)});
    // Kiln's reference backend evaluates the composites' pieces with f32-sized error (measured
    // 7e-9 here); a wrong epsilon or a counted ignored row moves the loss by over 1e-2.
    EXPECT_NEAR(out[0].get(0), c["loss"].get<double>(), 1e-7);
    const auto expected_grad = c["grad"].get<std::vector<double>>();
    ASSERT_EQ(out[1].numel(), static_cast<int64_t>(expected_grad.size()));
    for (size_t i = 0; i < expected_grad.size(); ++i) {
      EXPECT_NEAR(out[1].get(static_cast<int64_t>(i)), expected_grad[i], 1e-8) << i;
    }
  }
}

}  // namespace
}  // namespace kiln
