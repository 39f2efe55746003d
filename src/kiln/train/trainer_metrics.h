// Evaluation metrics of a classification run, as run_glue.py's compute_metrics and scikit-learn
// compute them: accuracy and F1 for classes (and for label sets), mean squared error for
// regression.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

namespace kiln {

// {"accuracy", "f1"}: F1 of class 1 with two classes (sklearn's binary average), the
// unweighted mean over the classes present in labels or predictions otherwise (macro).
nlohmann::json classification_metrics(std::span<const int64_t> predictions,
                                      std::span<const int32_t> labels, int64_t num_labels);

// Each row's predicted labels in a multi-label task: those whose logit is above 0 (sigmoid above
// 0.5), as run_classification.py thresholds them; ascending ids.
std::vector<std::vector<int32_t>> multi_label_predictions(std::span<const double> logits,
                                                          int64_t num_labels);

// Multi-label classification from [rows, num_labels] logits and each row's true label ids:
// {"accuracy": subset accuracy (a row counts when every label is right, sklearn's
// accuracy_score), "f1": micro F1 (what run_classification.py reports), "f1_macro": the
// unweighted mean of each label's F1}; F1 is 0 where tp + fp + fn is 0 (sklearn's zero_division).
nlohmann::json multi_label_metrics(std::span<const double> logits,
                                   std::span<const std::vector<int32_t>> label_sets,
                                   int64_t num_labels);

// {"mse"}: the mean of (prediction - label)^2.
nlohmann::json regression_metrics(std::span<const double> predictions,
                                  std::span<const float> labels);

// The index of the largest value of each row of a [rows, columns] row-major block (the first
// on ties, as numpy's argmax).
std::vector<int64_t> argmax_rows(std::span<const double> values, int64_t columns);

// A stable softmax of each row, in double.
std::vector<double> softmax_rows(std::span<const double> values, int64_t columns);

}  // namespace kiln
