// The Trainer's evaluation and prediction: forward passes without dropout over a split in file
// order (shared out among the processes of a distributed run), eval loss as a mean over the real
// rows, and the task's metrics.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <utility>

#include "kiln/dist/communicator.h"
#include "kiln/ir/error.h"
#include "kiln/train/distributed.h"
#include "kiln/train/classification_data.h"
#include "kiln/train/log_metrics.h"
#include "kiln/train/log_progress.h"
#include "kiln/train/trainer.h"
#include "kiln/train/trainer_metrics.h"

namespace kiln {

bool Trainer::log_is_tty() const { return &log_ == &std::cerr && ProgressBar::stderr_is_tty(); }

std::unique_ptr<ProgressBar> Trainer::batch_progress(size_t batches, std::string_view unit) const {
  if (args_.disable_tqdm || !dist::is_main_process()) return nullptr;
  const auto total = static_cast<int64_t>(batches);
  // Without a terminal: the last batch's line, and one every 30 s of a long evaluation.
  return std::make_unique<ProgressBar>(total, 0, std::max<int64_t>(total, 1), log_, log_is_tty(),
                                       ProgressBar::Clock{}, std::string(unit));
}

ForwardOutputs Trainer::forward(const TaskData& data, bool with_labels,
                               std::string_view progress_unit) {
  const auto start = std::chrono::steady_clock::now();
  check(data.size() > 0, data.source(), "has no examples");
  check(!with_labels || data.has_labels(), data.source(), "has no labels");
  const CollateOptions collate = collate_options(args_.per_device_eval_batch_size);
  std::vector<size_t> order(data.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::vector<std::vector<size_t>> batches =
      epoch_batches(order, collate.batch_size, false);
  // Each process runs its share of the batches; all get every batch's outputs back.
  dist::Communicator& world = dist::world();
  std::unique_ptr<ProgressBar> progress = batch_progress(batches.size(), progress_unit);
  std::vector<ForwardOutputs> mine;
  for (size_t b = 0; b < batches.size(); ++b) {
    if (!runs_batch(world, b)) continue;
    const std::vector<size_t>& rows = batches[b];
    TensorMap feeds = data.collate(rows, collate, with_labels, /*epoch=*/-1);
    if (!family_.takes_token_type_ids()) feeds.erase("token_type_ids");
    const int64_t compiles_before = compiles();
    std::vector<Tensor> outputs =
        programs_.forward(train_state_, feeds, with_labels, data.integer_labels());
    if (progress) {
      if (compiles() != compiles_before) progress->exclude_interval();
      progress->update(static_cast<int64_t>(b + 1), 0, std::nullopt, std::nullopt);
    }
    ForwardOutputs& batch = mine.emplace_back();
    const size_t count = outputs.size() - (with_labels ? 1 : 0);
    batch.rows.resize(count);
    for (size_t k = 0; k < count; ++k) {
      const Tensor& out = outputs[k];
      const int64_t width = out.numel() / out.shape()[0];
      for (size_t r = 0; r < rows.size(); ++r) {
        std::vector<float>& row = batch.rows[k].emplace_back(static_cast<size_t>(width));
        for (int64_t j = 0; j < width; ++j) {
          row[static_cast<size_t>(j)] = static_cast<float>(out.get(static_cast<int64_t>(r) * width + j));
        }
      }
    }
    if (with_labels) batch.loss_sum = outputs.back().get(0) * static_cast<double>(rows.size());
  }
  if (progress) progress->clear();
  ForwardOutputs result = gather_batches(world, mine, batches.size());
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

nlohmann::json Trainer::evaluate(const ClassificationDataset& data, const std::string& prefix) {
  check(data.size() > 0, data.source, "has no examples");
  check(data.label_kind != LabelKind::none, data.source, "has no label column");
  check_classification_labels(data, *config_, data.where(0));
  ClassificationData rows(data, tokenizer_, static_cast<size_t>(max_seq_length_for(args_)),
                          args_.task_name.value_or(""));
  return evaluate(rows, prefix);
}

nlohmann::json Trainer::evaluate(const TaskData& data, const std::string& prefix,
                                 ForwardOutputs* outputs) {
  const bool with_labels = data.has_labels();
  ForwardOutputs result = forward(data, with_labels);
  const auto rows = static_cast<int64_t>(data.size());
  nlohmann::json metrics = nlohmann::json::object();
  if (with_labels) metrics[prefix + "_loss"] = result.loss_sum / static_cast<double>(rows);
  const nlohmann::json scores = data.metrics(result);
  for (const auto& [key, value] : scores.items()) metrics[prefix + "_" + key] = value;
  metrics.update(speed_metrics(prefix, result.seconds, rows, result.batches));
  log(metrics);
  if (state_.epoch) metrics["epoch"] = *state_.epoch;
  for (const auto& callback : callbacks_) callback->on_evaluate(args_, state_, control_, metrics);
  if (outputs) *outputs = std::move(result);
  return metrics;
}

PredictionOutput Trainer::predict(const ClassificationDataset& data) {
  const bool with_labels = data.label_kind != LabelKind::none;
  check(data.size() > 0, data.source, "has no examples");
  if (with_labels) check_classification_labels(data, *config_, data.where(0));
  ClassificationData rows(data, tokenizer_, static_cast<size_t>(max_seq_length_for(args_)),
                          args_.task_name.value_or(""));
  return predict(rows);
}

PredictionOutput Trainer::predict(const ClassificationData& rows) {
  const ClassificationDataset& data = rows.dataset();
  const bool with_labels = rows.has_labels();
  ForwardOutputs result = forward(rows, with_labels, "predicting batch");
  PredictionOutput out;
  out.num_labels = config_->num_labels();
  out.logits = ClassificationData::logits(result);
  const bool regression =
      data.label_kind == LabelKind::regression || problem_type_for(*config_, true) == "regression";
  if (regression) {
    out.values = out.logits;
  } else if (config_->problem_type == "multi_label_classification") {
    out.label_sets = multi_label_predictions(out.logits, out.num_labels);
  } else {
    out.classes = argmax_rows(out.logits, out.num_labels);
  }
  if (with_labels) {
    const auto examples = static_cast<int64_t>(data.size());
    out.metrics["test_loss"] = result.loss_sum / static_cast<double>(examples);
    const nlohmann::json scores = rows.metrics(result);
    for (const auto& [key, value] : scores.items()) out.metrics["test_" + key] = value;
  }
  out.metrics.update(
      speed_metrics("test", result.seconds, static_cast<int64_t>(data.size()), result.batches));
  return out;
}

}  // namespace kiln
