// What `kiln evaluate` and `kiln predict` share: a Trainer on a trained model folder.
#include <iostream>

#include "kiln/ir/error.h"
#include "setup.h"

namespace kiln::cli {

SavedModelRun open_saved_model(RunOptions& options, const std::string& command, bool need_eval,
                               bool need_test) {
  TrainingArguments& args = options.args;
  finish_arguments(args);
  SavedModelRun run;
  run.backend = make_backend(args);
  check(args.model_name_or_path.has_value(), "--model_name_or_path",
        "kiln ", command, " needs a trained model folder");
  ModelSetup model = load_model_config(args);
  if (task_kind(args.task) == TaskKind::classification) {
    run.data = load_run_data(options, model.config, false, need_eval, need_test, std::cerr);
  } else {
    run.task_data =
        load_task_data(args, *model.tokenizer, false, need_eval, need_test, std::cerr);
  }
  load_model_weights(model, args, std::cerr);
  run.trainer = std::make_unique<Trainer>(args, model.config, std::move(model.weights),
                                          std::move(*model.tokenizer), *run.backend, std::cerr);
  return run;
}

}  // namespace kiln::cli
