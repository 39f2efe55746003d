// GLUE metrics from their definitions (sklearn's matthews_corrcoef, scipy's pearsonr/spearmanr).
#include "kiln/train/glue_metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "kiln/ir/error.h"
#include "kiln/train/trainer_metrics.h"

namespace kiln {
namespace {

constexpr std::array<std::string_view, 9> kGlueTasks = {"cola", "sst2", "mrpc", "qqp", "stsb",
                                                        "mnli", "qnli", "rte",  "wnli"};

// 1-based ranks, ties sharing the mean of the ranks they span (scipy's rankdata "average").
std::vector<double> average_ranks(std::span<const double> values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t start = 0; start < order.size();) {
    size_t end = start;
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    const double mean_rank = (static_cast<double>(start + end) + 1.0) / 2.0;
    for (size_t i = start; i < end; ++i) ranks[order[i]] = mean_rank;
    start = end;
  }
  return ranks;
}

void check_sizes(size_t predictions, size_t labels) {
  check(predictions == labels && labels > 0, "metrics", predictions, " predictions for ", labels,
        " labels");
}

}  // namespace

std::span<const std::string_view> glue_task_names() { return kGlueTasks; }

bool glue_task_is_regression(std::string_view task) { return task == "stsb"; }

nlohmann::json glue_class_metrics(std::string_view task, std::span<const int64_t> predictions,
                                  std::span<const int32_t> labels, int64_t num_labels) {
  check(!glue_task_is_regression(task), "--task_name", "stsb is a regression task");
  if (task == "cola") {
    return {{"matthews_correlation", matthews_correlation(predictions, labels, num_labels)}};
  }
  nlohmann::json both = classification_metrics(predictions, labels, num_labels);
  if (task == "mrpc" || task == "qqp") {
    both["combined_score"] = (both["accuracy"].get<double>() + both["f1"].get<double>()) / 2.0;
    return both;
  }
  return {{"accuracy", both["accuracy"]}};
}

nlohmann::json glue_regression_metrics(std::span<const double> predictions,
                                       std::span<const float> labels) {
  std::vector<double> targets(labels.begin(), labels.end());
  const double pearson = pearson_correlation(predictions, targets);
  const double spearman = spearman_correlation(predictions, targets);
  return {{"pearson", pearson}, {"spearmanr", spearman}, {"combined_score", (pearson + spearman) / 2.0}};
}

double matthews_correlation(std::span<const int64_t> predictions, std::span<const int32_t> labels,
                            int64_t num_labels) {
  check_sizes(predictions.size(), labels.size());
  const auto classes = static_cast<size_t>(std::max<int64_t>(num_labels, 2));
  std::vector<double> true_count(classes), predicted_count(classes);
  double correct = 0.0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const auto label = static_cast<size_t>(labels[i]);
    const auto predicted = static_cast<size_t>(predictions[i]);
    check(label < classes && predicted < classes, "metrics", "class ", std::max(label, predicted),
          " outside the ", classes, " classes");
    ++true_count[label];
    ++predicted_count[predicted];
    if (label == predicted) ++correct;
  }
  const auto samples = static_cast<double>(labels.size());
  const double true_dot_predicted =
      std::inner_product(true_count.begin(), true_count.end(), predicted_count.begin(), 0.0);
  const double true_dot_true =
      std::inner_product(true_count.begin(), true_count.end(), true_count.begin(), 0.0);
  const double predicted_dot_predicted = std::inner_product(
      predicted_count.begin(), predicted_count.end(), predicted_count.begin(), 0.0);
  const double cov_true_predicted = correct * samples - true_dot_predicted;
  const double cov_predicted = samples * samples - predicted_dot_predicted;
  const double cov_true = samples * samples - true_dot_true;
  if (cov_predicted * cov_true == 0.0) return 0.0;
  return cov_true_predicted / std::sqrt(cov_true * cov_predicted);
}

double pearson_correlation(std::span<const double> x, std::span<const double> y) {
  check_sizes(x.size(), y.size());
  const auto n = static_cast<double>(x.size());
  const double mean_x = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double mean_y = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double xy = 0.0, xx = 0.0, yy = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double dx = x[i] - mean_x, dy = y[i] - mean_y;
    xy += dx * dy;
    xx += dx * dx;
    yy += dy * dy;
  }
  if (xx == 0.0 || yy == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return std::clamp(xy / std::sqrt(xx * yy), -1.0, 1.0);
}

double spearman_correlation(std::span<const double> x, std::span<const double> y) {
  check_sizes(x.size(), y.size());
  return pearson_correlation(average_ranks(x), average_ranks(y));
}

}  // namespace kiln
