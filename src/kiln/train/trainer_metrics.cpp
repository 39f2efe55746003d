// Accuracy, F1 and MSE over host predictions, and row-wise argmax and softmax.
#include "kiln/train/trainer_metrics.h"

#include <algorithm>
#include <cmath>

#include "kiln/ir/error.h"

namespace kiln {

namespace {

// sklearn's F1: 2tp / (2tp + fp + fn), 0 when a class is never predicted nor true.
double f1_from_counts(int64_t true_positive, int64_t false_positive, int64_t false_negative) {
  int64_t denominator = 2 * true_positive + false_positive + false_negative;
  return denominator == 0
             ? 0.0
             : 2.0 * static_cast<double>(true_positive) / static_cast<double>(denominator);
}

}  // namespace

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
  auto f1_of = [&](size_t c) {
    return f1_from_counts(true_positive[c], false_positive[c], false_negative[c]);
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

std::vector<std::vector<int32_t>> multi_label_predictions(std::span<const double> logits,
                                                          int64_t num_labels) {
  std::vector<std::vector<int32_t>> out;
  for (size_t start = 0; start < logits.size(); start += static_cast<size_t>(num_labels)) {
    std::vector<int32_t>& row = out.emplace_back();
    for (int32_t c = 0; c < num_labels; ++c) {
      if (logits[start + static_cast<size_t>(c)] > 0.0) row.push_back(c);
    }
  }
  return out;
}

nlohmann::json multi_label_metrics(std::span<const double> logits,
                                   std::span<const std::vector<int32_t>> label_sets,
                                   int64_t num_labels) {
  check(num_labels > 0 && logits.size() == label_sets.size() * static_cast<size_t>(num_labels) &&
            !label_sets.empty(),
        "metrics", logits.size(), " logits for ", label_sets.size(), " rows of ", num_labels,
        " labels");
  const std::vector<std::vector<int32_t>> predictions = multi_label_predictions(logits, num_labels);
  const auto labels = static_cast<size_t>(num_labels);
  std::vector<int64_t> true_positive(labels), false_positive(labels), false_negative(labels);
  int64_t exact = 0;
  for (size_t row = 0; row < label_sets.size(); ++row) {
    std::vector<bool> truth(labels), predicted(labels);
    for (int32_t c : label_sets[row]) truth.at(static_cast<size_t>(c)) = true;
    for (int32_t c : predictions[row]) predicted[static_cast<size_t>(c)] = true;
    exact += truth == predicted;
    for (size_t c = 0; c < labels; ++c) {
      true_positive[c] += truth[c] && predicted[c];
      false_positive[c] += !truth[c] && predicted[c];
      false_negative[c] += truth[c] && !predicted[c];
    }
  }
  double macro = 0.0;
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t c = 0; c < labels; ++c) {
    macro += f1_from_counts(true_positive[c], false_positive[c], false_negative[c]);
    tp += true_positive[c];
    fp += false_positive[c];
    fn += false_negative[c];
  }
  return {{"accuracy", static_cast<double>(exact) / static_cast<double>(label_sets.size())},
          {"f1", f1_from_counts(tp, fp, fn)},
          {"f1_macro", macro / static_cast<double>(labels)}};
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
