// The data of qa and mlm runs: SQuAD files into features (run_qa.py) and text files into masked-LM
// examples (run_mlm.py), each split cut by --max_*_samples.
#include <filesystem>

#include "kiln/io/lm_dataset.h"
#include "kiln/io/squad_features.h"
#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "kiln/train/mlm_data.h"
#include "kiln/train/qa_data.h"
#include "setup.h"

namespace kiln::cli {
namespace {

size_t limit(const std::optional<int64_t>& count) {
  return count ? static_cast<size_t>(*count) : 0;  // 0: all
}

SquadDataset load_questions(const TrainingArguments& args, const std::string& path,
                            const std::optional<int64_t>& max_samples) {
  SquadDataset dataset = squad_head(load_squad(path), limit(max_samples));
  check(args.version_2_with_negative || !dataset.has_unanswerable(), path,
        "has questions without answers (SQuAD v2.0); add --version_2_with_negative");
  return dataset;
}

std::unique_ptr<TaskData> qa_split(const TrainingArguments& args, const Tokenizer& tokenizer,
                                   const std::string& path,
                                   const std::optional<int64_t>& max_samples, bool training) {
  SquadDataset dataset = load_questions(args, path, max_samples);
  QaFeatureOptions options{static_cast<size_t>(args.max_seq_length),
                           static_cast<size_t>(args.doc_stride)};
  QaFeatures features = squad_features(tokenizer, dataset, options).head(limit(max_samples));
  if (training) return std::make_unique<QaTrainData>(std::move(features));
  QaPostprocessOptions post;
  post.version_2_with_negative = args.version_2_with_negative;
  post.n_best_size = static_cast<size_t>(args.n_best_size);
  post.max_answer_length = static_cast<size_t>(args.max_answer_length);
  post.null_score_diff_threshold = args.null_score_diff_threshold;
  return std::make_unique<QaEvalData>(std::move(dataset), std::move(features), post);
}

std::unique_ptr<TaskData> mlm_split(const TrainingArguments& args, const Tokenizer& tokenizer,
                                    const TextLines& text,
                                    const std::optional<int64_t>& max_samples) {
  LmDatasetOptions options;
  options.max_seq_length = static_cast<size_t>(args.max_seq_length);
  options.line_by_line = args.line_by_line;
  LmDataset dataset = lm_dataset(tokenizer, text, options);
  if (max_samples && dataset.size() > static_cast<size_t>(*max_samples)) {
    dataset.examples.resize(static_cast<size_t>(*max_samples));
    dataset.lines.resize(static_cast<size_t>(*max_samples));
  }
  check(dataset.size() > 0, text.source, "no examples of ", options.max_seq_length,
        " tokens (a shorter --max_seq_length or --line_by_line may help)");
  std::optional<int32_t> mask = tokenizer.token_to_id(tokenizer.config().special.mask);
  check(mask.has_value(), "--task mlm", "the tokenizer has no mask token '",
        tokenizer.config().special.mask, "'");
  MlmOptions mlm;
  mlm.mlm_probability = args.mlm_probability;
  mlm.mask_id = *mask;
  mlm.vocab_size = tokenizer.vocab_size();
  mlm.seed = args.seed;
  return std::make_unique<MlmData>(std::move(dataset), mlm);
}

TaskRunData load_mlm_data(const TrainingArguments& args, const Tokenizer& tokenizer,
                          bool need_train, bool need_eval, std::ostream& log) {
  TaskRunData data;
  // As classification: a split is held out only for a run that evaluates.
  const bool split = need_eval && !args.validation_file && args.validation_split_percentage > 0;
  std::optional<TextLines> train, eval;
  if (need_train || split) {
    train = read_text_lines(
        required_file(args.train_file, "--train_file", "mlm needs --train_file"));
    if (split) {
      auto [held_out, kept] = split_text_lines(*train, args.validation_split_percentage);
      report_held_out(log, held_out.lines.size(), train->lines.size(), "lines",
                      train->source, args);
      train = std::move(kept);
      eval = std::move(held_out);
    }
  }
  if (need_eval && !eval) {
    eval = read_text_lines(required_file(args.validation_file, "--validation_file",
                                         "evaluation needs --validation_file, or --train_file with "
                                         "--validation_split_percentage above 0"));
  }
  if (need_train) data.train = mlm_split(args, tokenizer, *train, args.max_train_samples);
  if (need_eval) data.eval = mlm_split(args, tokenizer, *eval, args.max_eval_samples);
  return data;
}

}  // namespace

TaskRunData load_task_data(const TrainingArguments& args, const Tokenizer& tokenizer,
                           bool need_train, bool need_eval, bool need_test, std::ostream& log) {
  if (task_kind(args.task) == TaskKind::masked_lm) {
    check_usage(!need_test, "--do_predict", "mlm has no prediction step; evaluate instead");
    return load_mlm_data(args, tokenizer, need_train, need_eval, log);
  }
  TaskRunData data;
  if (need_train) {
    data.train = qa_split(args, tokenizer,
                          required_file(args.train_file, "--train_file",
                                        "training needs --train_file"),
                          args.max_train_samples, true);
  }
  if (need_eval) {
    data.eval = qa_split(args, tokenizer,
                         required_file(args.validation_file, "--validation_file",
                                       "qa evaluation needs --validation_file (a SQuAD file)"),
                         args.max_eval_samples, false);
  }
  if (need_test) {
    data.test = qa_split(args, tokenizer,
                         required_file(args.test_file, "--test_file",
                                       "prediction needs --test_file"),
                         args.max_predict_samples, false);
  }
  return data;
}

}  // namespace kiln::cli
