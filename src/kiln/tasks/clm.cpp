// --task clm: run_clm.py's text blocks and validation split; evaluation adds perplexity to the
// loss and next-token accuracy. It has no prediction step.
#include "kiln/tasks/clm.h"

#include <algorithm>

#include "kiln/io/lm_dataset.h"
#include "kiln/ir/error.h"
#include "kiln/tasks/lm_text.h"
#include "kiln/train/clm_data.h"

namespace kiln {
namespace {

std::unique_ptr<TaskData> clm_split(const Tokenizer& tokenizer, const TextLines& text,
                                    int64_t block_size,
                                    const std::optional<int64_t>& max_samples) {
  LmDatasetOptions options;
  options.max_seq_length = static_cast<size_t>(block_size);
  options.keep_linebreaks = true;  // run_clm.py's default
  LmDataset dataset = lm_dataset(tokenizer, text, options);
  if (max_samples) dataset.keep_first(static_cast<size_t>(*max_samples));
  check(dataset.size() > 0, text.source, "no block of ", block_size,
        " tokens (a shorter --block_size may help)");
  return std::make_unique<ClmData>(std::move(dataset));
}

class ClmTask : public LanguageModelingTask {
 public:
  std::string_view name() const override { return "clm"; }
  ModelHead head() const override { return ModelHead::causal_lm; }

  TaskSplits load_data(const RunOptions& options, const Tokenizer& tokenizer,
                       PretrainedConfig& config, SplitsWanted wanted,
                       std::ostream& log) const override {
    const TrainingArguments& args = options.args;
    LmText text = read_lm_text(args, wanted, name(), log);
    const int64_t block =
        clm_block_size(args.block_size, tokenizer.config().model_max_length,
                       model_family(config).max_positions(config), log);
    TaskSplits data;
    if (wanted.train) data.train = clm_split(tokenizer, *text.train, block, args.max_train_samples);
    if (wanted.eval) data.eval = clm_split(tokenizer, *text.eval, block, args.max_eval_samples);
    return data;
  }
};

}  // namespace

int64_t clm_block_size(const std::optional<int64_t>& block_size,
                       const std::optional<size_t>& model_max_length, int64_t max_positions,
                       std::ostream& log) {
  int64_t block = 0;
  if (!block_size) {
    if (model_max_length && static_cast<int64_t>(*model_max_length) <= max_positions) {
      block = static_cast<int64_t>(*model_max_length);
    } else {
      block = std::min<int64_t>(1024, max_positions);
      log << "The tokenizer picked seems to have a very large `model_max_length` ("
          << (model_max_length ? std::to_string(*model_max_length) : "unset")
          << "). Using block_size=" << block
          << " instead. You can change that default value by passing --block_size xxx.\n";
    }
  } else {
    block = *block_size;
    if (model_max_length && block > static_cast<int64_t>(*model_max_length)) {
      block = static_cast<int64_t>(*model_max_length);
      log << "The block_size passed (" << *block_size
          << ") is larger than the maximum length for the model (" << block
          << "). Using block_size=" << block << ".\n";
    }
  }
  check(block <= max_positions, "--block_size", block,
        " is longer than the model takes (", max_positions, " positions)");
  return block;
}

const Task& clm_task() {
  static const ClmTask task;
  return task;
}

}  // namespace kiln
