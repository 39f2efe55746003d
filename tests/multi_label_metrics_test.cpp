// Multi-label metrics (subset accuracy, micro F1 as run_classification.py reports it, macro F1)
// against tests/data/multi_label/metrics.json, which
// tests/fixtures_gen/make_multi_label_metrics_fixtures.py computes from sklearn's definitions
// with numpy (a label never true nor predicted, nothing predicted, a logit of exactly 0).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/train/trainer_metrics.h"
#include "support/testing.h"

namespace kiln {
namespace {

TEST(MultiLabelMetrics, MatchTheReferenceFormulas) {
  const nlohmann::json cases = nlohmann::json::parse(
      testing::read_text(std::string(KILN_SOURCE_DIR) + "/tests/data/multi_label/metrics.json"));
  ASSERT_GE(cases.size(), 6u);
  for (const nlohmann::json& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto sets = c["label_sets"].get<std::vector<std::vector<int32_t>>>();
    const nlohmann::json got = multi_label_metrics(c["logits"].get<std::vector<double>>(), sets,
                                                   c["num_labels"].get<int64_t>());
    for (const char* key : {"accuracy", "f1", "f1_macro"}) {
      EXPECT_NEAR(got.at(key).get<double>(), c["expected"][key].get<double>(), 1e-12) << key;
    }
  }
}

TEST(MultiLabelMetrics, PredictionsAreTheLogitsAboveZero) {
  EXPECT_EQ(multi_label_predictions(std::vector<double>{0.5, 0.0, -1.0, 2.0, 3.0, -0.1}, 3),
            (std::vector<std::vector<int32_t>>{{0}, {0, 1}}));
}

}  // namespace
}  // namespace kiln
