// Command-line flags of TrainingArguments with CLI11, spelled and parsed as HfArgumentParser
// does (--per_device_train_batch_size 8, --do_train, --do_train false).
#pragma once

#include <span>
#include <string_view>

#include "kiln/train/training_arguments.h"

namespace CLI {
class App;
}

namespace kiln {

// Adds to `app` an optional positional JSON file of arguments (as run_glue.py's
// `run_glue.py args.json`) and one flag per TrainingArguments field, grouped, each showing in
// --help the value `args` holds now as its default. Parsing writes the given fields into `args`: first those of the JSON file,
// then the flags, so flags override the file. Bool flags take an optional value (--do_train,
// --do_train true, --do_train=no); lists take several words or commas (--report_to jsonl
// tensorboard). A bad value is a CLI::ValidationError naming the flag. Call
// training_arguments_post_init afterwards. `args` must outlive the parse. When `listed` names
// fields, --help lists only their flags (a command that reads only those); the others are still
// accepted, as HF's scripts accept every flag.
void training_arguments_add_flags(CLI::App& app, TrainingArguments& args,
                                  std::span<const std::string_view> listed = {});

}  // namespace kiln
