// --task mlm: run_mlm.py's text blocks (or lines) and validation split, masked afresh each
// epoch; evaluation adds perplexity. It has no prediction step.
#include "kiln/tasks/mlm.h"

#include "kiln/io/lm_dataset.h"
#include "kiln/ir/error.h"
#include "kiln/tasks/lm_text.h"
#include "kiln/train/mlm_data.h"

namespace kiln {
namespace {

std::unique_ptr<TaskData> mlm_split(const TrainingArguments& args, const Tokenizer& tokenizer,
                                    const TextLines& text,
                                    const std::optional<int64_t>& max_samples) {
  LmDatasetOptions options;
  options.max_seq_length = static_cast<size_t>(max_seq_length_for(args));
  options.line_by_line = args.line_by_line;
  LmDataset dataset = lm_dataset(tokenizer, text, options);
  if (max_samples) dataset.keep_first(static_cast<size_t>(*max_samples));
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

class MlmTask : public LanguageModelingTask {
 public:
  std::string_view name() const override { return "mlm"; }
  ModelHead head() const override { return ModelHead::masked_lm; }

  TaskSplits load_data(const RunOptions& options, const Tokenizer& tokenizer,
                       PretrainedConfig& /*config*/, SplitsWanted wanted,
                       std::ostream& log) const override {
    const TrainingArguments& args = options.args;
    LmText text = read_lm_text(args, wanted, name(), log);
    TaskSplits data;
    if (wanted.train) data.train = mlm_split(args, tokenizer, *text.train, args.max_train_samples);
    if (wanted.eval) data.eval = mlm_split(args, tokenizer, *text.eval, args.max_eval_samples);
    return data;
  }
};

}  // namespace

const Task& mlm_task() {
  static const MlmTask task;
  return task;
}

}  // namespace kiln
