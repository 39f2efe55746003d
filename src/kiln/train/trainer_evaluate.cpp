// The Trainer's evaluation and prediction: forward passes without dropout over a dataset in
// file order, eval loss as a mean over the real examples, metrics as run_glue.py computes them.
#include <chrono>

#include "kiln/ir/error.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/trainer.h"
#include "kiln/train/trainer_metrics.h"

namespace kiln {

struct Trainer::ForwardResult {
  std::vector<double> logits;  // [examples, num_labels]
  double loss_sum = 0.0;       // batch losses weighted by their real examples
  int64_t batches = 0;
  double seconds = 0.0;
};

Trainer::ForwardResult Trainer::forward_all(const ClassificationDataset& data, bool with_labels) {
  const auto start = std::chrono::steady_clock::now();
  check(data.size() > 0, data.source, "has no examples");
  if (with_labels) {
    check(data.label_kind != LabelKind::none, data.source, "has no label column");
    check(data.num_labels() == config_.num_labels(), data.where(0), "the data has ",
          data.num_labels(), " labels, the model ", config_.num_labels());
  }
  const bool integer_labels = data.label_kind != LabelKind::regression;
  std::vector<Encoding> encodings =
      encode_dataset(tokenizer_, data, static_cast<size_t>(args_.max_seq_length));
  const CollateOptions collate = collate_options(args_.per_device_eval_batch_size);
  std::vector<size_t> order(data.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  ForwardResult result;
  const int64_t labels = config_.num_labels();
  for (const std::vector<size_t>& indices : epoch_batches(order, collate.batch_size, false)) {
    Batch batch = collate_batch(encodings, data, indices, collate);
    TensorMap feeds = batch_feeds(batch);
    if (!with_labels) feeds.erase("labels");
    std::vector<Tensor> outputs =
        programs_.forward(train_state_.params, feeds, with_labels, integer_labels);
    for (int64_t i = 0; i < static_cast<int64_t>(batch.real_examples) * labels; ++i) {
      result.logits.push_back(outputs[0].get(i));
    }
    if (with_labels) {
      result.loss_sum += outputs[1].get(0) * static_cast<double>(batch.real_examples);
    }
    ++result.batches;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

nlohmann::json Trainer::evaluate(const ClassificationDataset& data, const std::string& prefix) {
  ForwardResult result = forward_all(data, true);
  const auto examples = static_cast<int64_t>(data.size());
  nlohmann::json metrics = {{prefix + "_loss", result.loss_sum / static_cast<double>(examples)}};
  nlohmann::json scores;
  if (data.label_kind == LabelKind::regression) {
    scores = regression_metrics(result.logits, data.label_values);
  } else {
    scores = classification_metrics(argmax_rows(result.logits, config_.num_labels()),
                                    data.label_ids, config_.num_labels());
  }
  for (const auto& [key, value] : scores.items()) metrics[prefix + "_" + key] = value;
  metrics.update(speed_metrics(prefix, result.seconds, examples, result.batches));
  log(metrics);
  if (state_.epoch) metrics["epoch"] = *state_.epoch;
  for (const auto& callback : callbacks_) callback->on_evaluate(args_, state_, control_, metrics);
  return metrics;
}

PredictionOutput Trainer::predict(const ClassificationDataset& data) {
  const bool with_labels = data.label_kind != LabelKind::none;
  ForwardResult result = forward_all(data, with_labels);
  PredictionOutput out;
  out.num_labels = config_.num_labels();
  out.logits = std::move(result.logits);
  const bool regression =
      data.label_kind == LabelKind::regression || bert_problem_type(config_, true) == "regression";
  if (regression) {
    out.values = out.logits;
  } else {
    out.classes = argmax_rows(out.logits, out.num_labels);
  }
  if (with_labels) {
    const auto examples = static_cast<int64_t>(data.size());
    out.metrics["test_loss"] = result.loss_sum / static_cast<double>(examples);
    nlohmann::json scores =
        regression ? regression_metrics(out.values, data.label_values)
                   : classification_metrics(out.classes, data.label_ids, out.num_labels);
    for (const auto& [key, value] : scores.items()) out.metrics["test_" + key] = value;
  }
  out.metrics.update(
      speed_metrics("test", result.seconds, static_cast<int64_t>(data.size()), result.batches));
  return out;
}

}  // namespace kiln
