// Accuracy, F1 and MSE over host predictions, and row-wise argmax and softmax.
#include "kiln/train/trainer_metrics.h"

#include <algorithm>
#include <cmath>

#include "kiln/ir/error.h"

namespace kiln {

nlohmann::json classification_metrics(std::span<const int64_t> predictions,
                                      std::span<const int32_t> labels, int64_t num_labels) {
  check(predictions.size() == labels.size() && !labels.empty(), "metrics", predictions.size(),
        " predictions for ", labels.size(), " labels");
  const auto classes = static_cast<size_t>(std::max<int64_t>(num_labels, 2));
  std::vector<int64_t> true_positive(classes), false_positive(classes), false_negative(classes);
  std::vector<bool> present(classes);
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    auto label = static_cast<size_t>(labels[i]);
    auto predicted = static_cast<size_t>(predictions[i]);
    check(label < classes && predicted < classes, "metrics", "class ", std::max(label, predicted),
          " outside the ", classes, " classes");
    present[label] = present[predicted] = true;
    if (label == predicted) {
      ++correct;
      ++true_positive[label];
    } else {
      ++false_positive[predicted];
      ++false_negative[label];
    }
  }
  // sklearn: 2tp / (2tp + fp + fn), 0 when a class is never predicted nor true.
  auto f1_of = [&](size_t c) {
    int64_t denominator = 2 * true_positive[c] + false_positive[c] + false_negative[c];
    return denominator == 0
               ? 0.0
               : 2.0 * static_cast<double>(true_positive[c]) / static_cast<double>(denominator);
  };
  double f1 = 0.0;
  if (num_labels == 2) {
    f1 = f1_of(1);
  } else {
    int64_t counted = 0;
    for (size_t c = 0; c < classes; ++c) {
      if (!present[c]) continue;
      f1 += f1_of(c);
      ++counted;
    }
    f1 /= static_cast<double>(counted);
  }
  return {{"accuracy", static_cast<double>(correct) / static_cast<double>(labels.size())},
          {"f1", f1}};
}

nlohmann::json regression_metrics(std::span<const double> predictions,
                                  std::span<const float> labels) {
  check(predictions.size() == labels.size() && !labels.empty(), "metrics", predictions.size(),
        " predictions for ", labels.size(), " labels");
  double sum = 0.0;
  for (size_t i = 0; i < labels.size(); ++i) {
    double error = predictions[i] - static_cast<double>(labels[i]);
    sum += error * error;
  }
  return {{"mse", sum / static_cast<double>(labels.size())}};
}

std::vector<int64_t> argmax_rows(std::span<const double> values, int64_t columns) {
  std::vector<int64_t> out;
  for (size_t start = 0; start < values.size(); start += static_cast<size_t>(columns)) {
    auto row = values.subspan(start, static_cast<size_t>(columns));
    out.push_back(std::max_element(row.begin(), row.end()) - row.begin());
  }
  return out;
}

std::vector<double> softmax_rows(std::span<const double> values, int64_t columns) {
  std::vector<double> out(values.size());
  for (size_t start = 0; start < values.size(); start += static_cast<size_t>(columns)) {
    auto row = values.subspan(start, static_cast<size_t>(columns));
    double top = *std::max_element(row.begin(), row.end()), total = 0.0;
    for (size_t j = 0; j < row.size(); ++j) total += out[start + j] = std::exp(row[j] - top);
    for (size_t j = 0; j < row.size(); ++j) out[start + j] /= total;
  }
  return out;
}

}  // namespace kiln
