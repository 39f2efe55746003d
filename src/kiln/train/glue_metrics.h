// The metrics run_glue.py reports for --task_name (evaluate's "glue" metric): Matthews
// correlation for cola, Pearson and Spearman for stsb, accuracy and F1 for mrpc and qqp,
// accuracy for the others, plus combined_score (their mean) when there are two or more.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>

namespace kiln {

// cola, sst2, mrpc, qqp, stsb, mnli, qnli, rte, wnli: run_glue.py's task_to_keys.
std::span<const std::string_view> glue_task_names();

// True for stsb, the one regression task.
bool glue_task_is_regression(std::string_view task);

// The metrics of a class task (all but stsb) on argmax predictions.
nlohmann::json glue_class_metrics(std::string_view task, std::span<const int64_t> predictions,
                                  std::span<const int32_t> labels, int64_t num_labels);

// stsb's {"pearson", "spearmanr", "combined_score"}.
nlohmann::json glue_regression_metrics(std::span<const double> predictions,
                                       std::span<const float> labels);

// sklearn.metrics.matthews_corrcoef for any number of classes: 0 when a denominator factor is
// 0 (every prediction, or every label, the same class).
double matthews_correlation(std::span<const int64_t> predictions, std::span<const int32_t> labels,
                            int64_t num_labels);

// scipy.stats.pearsonr's statistic; NaN when either side is constant (scipy warns and does too).
double pearson_correlation(std::span<const double> x, std::span<const double> y);

// scipy.stats.spearmanr's statistic: Pearson of the ranks, tied values sharing their mean rank.
double spearman_correlation(std::span<const double> x, std::span<const double> y);

}  // namespace kiln
