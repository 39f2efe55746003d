// What the language-modeling recipes (run_mlm.py, run_clm.py) share: the text lines of the data
// flags with the validation split, perplexity, and no prediction step.
#pragma once

#include <optional>
#include <ostream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kiln/io/lm_dataset.h"
#include "kiln/tasks/task.h"

namespace kiln {

// The lines of the wanted splits (the others unset): --train_file, and --validation_file or, for
// a run that evaluates without one, the first --validation_split_percentage of the train file's
// lines (reported to `log`). Errors name the flag and `task` ("mlm").
struct LmText {
  std::optional<TextLines> train, eval;
};
LmText read_lm_text(const TrainingArguments& args, SplitsWanted wanted, std::string_view task,
                    std::ostream& log);

// What mlm and clm share past their data: evaluation adds the scripts' perplexity, exp(eval_loss)
// (infinite when that overflows), and there is no prediction step (read_lm_text refuses
// --do_predict).
class LanguageModelingTask : public Task {
 public:
  nlohmann::json evaluate(Trainer& trainer, const TaskData& data,
                          const TrainingArguments& args) const override;
  nlohmann::json predict(Trainer& trainer, const TaskData& data,
                         const TrainingArguments& args) const override;
};

}  // namespace kiln
