// The GLUE metrics of --task_name against tests/data/glue/metrics.json, which
// tests/fixtures_gen/make_glue_metrics_fixtures.py computes from sklearn's and scipy's definitions
// with numpy (ties for Spearman, the zero-denominator case of Matthews, three classes).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kiln/train/glue_metrics.h"
#include "support/testing.h"

namespace kiln {
namespace {

nlohmann::json cases() {
  return nlohmann::json::parse(
      testing::read_text(std::string(KILN_SOURCE_DIR) + "/tests/data/glue/metrics.json"));
}

TEST(GlueMetrics, MatchTheReferenceFormulas) {
  int checked = 0;
  for (const nlohmann::json& c : cases()) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::string task = c["task"];
    nlohmann::json got;
    if (glue_task_is_regression(task)) {
      got = glue_regression_metrics(c["predictions"].get<std::vector<double>>(),
                                    c["labels"].get<std::vector<float>>());
    } else {
      got = glue_class_metrics(task, c["predictions"].get<std::vector<int64_t>>(),
                               c["labels"].get<std::vector<int32_t>>(), c["num_labels"]);
    }
    ASSERT_EQ(got.size(), c["expected"].size()) << got.dump();
    for (const auto& [key, expected] : c["expected"].items()) {
      ASSERT_TRUE(got.contains(key)) << key;
      EXPECT_NEAR(got[key].get<double>(), expected.get<double>(), 1e-12) << key;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 13);
}

TEST(GlueMetrics, ConstantPredictionsHaveNoPearson) {
  const std::vector<double> constant = {2.0, 2.0, 2.0}, varying = {1.0, 2.0, 3.0};
  EXPECT_TRUE(std::isnan(pearson_correlation(constant, varying)));
  EXPECT_TRUE(std::isnan(spearman_correlation(varying, constant)));
}

TEST(GlueMetrics, StsbIsNotAClassTask) {
  const std::vector<int64_t> predictions = {0, 1};
  const std::vector<int32_t> labels = {0, 1};
  EXPECT_THROW(glue_class_metrics("stsb", predictions, labels, 2), Error);
}

}  // namespace
}  // namespace kiln
