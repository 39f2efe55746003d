// What `kiln evaluate` and `kiln predict` share: a Trainer on a trained model folder.
#include <array>
#include <iostream>
#include <vector>

#include "kiln/ir/usage_error.h"
#include "kiln/tasks/registry.h"
#include "setup.h"

namespace kiln::cli {
namespace {

// The TrainingArguments a saved model's run reads: the model, the data, evaluation batches, the
// hardware and the output folder.
constexpr std::array<std::string_view, 23> kSharedFlags = {
    "task",           "task_name",             "model_name_or_path",    "config_name",       "tokenizer_name",
    "text_column_name", "text_pair_column_name", "label_column_name", "max_seq_length",
    "pad_to_max_length", "output_dir",         "per_device_eval_batch_size", "disable_tqdm",
    "seed",           "data_seed",             "bf16",              "device",
    "pjrt_plugin",    "num_devices",           "ddp_backend",       "ddp_timeout",
    "compile_cache_dir", "disable_passes"};
// qa's features and answers.
constexpr std::array<std::string_view, 5> kQaFlags = {
    "doc_stride", "version_2_with_negative", "n_best_size", "max_answer_length",
    "null_score_diff_threshold"};
// ner's labels and metrics.
constexpr std::array<std::string_view, 2> kNerFlags = {"label_all_tokens",
                                                       "return_entity_level_metrics"};
constexpr std::array<std::string_view, 7> kEvaluateOnlyFlags = {
    "train_file",      "validation_file", "validation_split_percentage", "max_eval_samples",
    "mlm_probability", "line_by_line",    "block_size"};
constexpr std::array<std::string_view, 2> kPredictOnlyFlags = {"test_file", "max_predict_samples"};

template <typename... Lists>
std::vector<std::string_view> concatenated(const Lists&... lists) {
  std::vector<std::string_view> names;
  (names.insert(names.end(), lists.begin(), lists.end()), ...);
  return names;
}

}  // namespace

std::span<const std::string_view> evaluate_flag_names() {
  static const std::vector<std::string_view> names =
      concatenated(kSharedFlags, kQaFlags, kNerFlags, kEvaluateOnlyFlags);
  return names;
}

std::span<const std::string_view> predict_flag_names() {
  static const std::vector<std::string_view> names =
      concatenated(kSharedFlags, kQaFlags, kNerFlags, kPredictOnlyFlags);
  return names;
}

SavedModelRun open_saved_model(RunOptions& options, const std::string& command,
                               SplitsWanted wanted) {
  TrainingArguments& args = options.args;
  finish_arguments(args, /*task_of_the_model=*/true);
  SavedModelRun run;
  run.backend = make_backend(args);
  check_usage(args.model_name_or_path.has_value(), "--model_name_or_path",
        "kiln ", command, " needs a trained model folder");
  run.task = &find_task(*args.task);
  ModelSetup model = load_model_config(args, *run.task);
  run.data = run.task->load_data(options, *model.tokenizer, *model.config, wanted, std::cerr);
  load_model_weights(model, *run.task, args, std::cerr);
  run.trainer = make_trainer(args, model, *run.backend);
  return run;
}

}  // namespace kiln::cli
