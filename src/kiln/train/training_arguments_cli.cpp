// TrainingArguments flags on a CLI11 app: one option per field from the shared field table.
#include "kiln/train/training_arguments_cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "kiln/ir/error.h"
#include "kiln/train/training_arguments_fields.h"

namespace kiln {

void training_arguments_add_flags(CLI::App& app, TrainingArguments& args,
                                 std::span<const std::string_view> listed) {
  for (std::string_view name : listed) {
    check(find_training_argument_field(name) != nullptr, "training_arguments_add_flags",
          "no field named ", name);
  }
  // Defined first, so that its callback runs before the flags' and they override the file.
  app.add_option(
         "args_file",
         [&args, &app](const CLI::results_t& words) {
           const std::string& path = words.at(0);
           // After an unknown flag, the word is its value: the error about the flag follows.
           if (!path.ends_with(".json") && !app.remaining().empty()) return true;
           // A stray word here is more often the value of a mistyped flag than a file.
           if (!path.ends_with(".json")) {
             throw CLI::ValidationError("args_file", "'" + path +
                                                        "' is not a .json file of arguments (is "
                                                        "it the value of an unknown flag?)");
           }
           try {
             training_arguments_load_json(args, path);
           } catch (const Error& error) {
             throw CLI::ValidationError(std::string(error.what()));
           }
           return true;
         },
         "A JSON file of these arguments (put it before the flags, which override it)")
      ->type_name("JSON");

  for (const ArgumentField& field : training_argument_fields()) {
    auto set = [&args, &field](const CLI::results_t& words) {
      try {
        argument_set_text(args, field, words);
      } catch (const Error& error) {
        throw CLI::ValidationError(std::string(error.what()));
      }
      return true;
    };
    CLI::Option* option = app.add_option("--" + std::string(field.name), CLI::callback_t(set),
                                        std::string(field.help));
    const bool shown =
        listed.empty() || std::find(listed.begin(), listed.end(), field.name) != listed.end();
    // CLI11 leaves options of the empty group out of --help; they are still accepted.
    option->group(shown ? std::string(field.group) : std::string())
        ->type_name(argument_type_name(field))
        ->default_str(argument_text(args, field));
    if (argument_takes_bare_flag(field)) {
      // expected(0) marks the option flag-like, so that a bare flag yields "true"; the range
      // then lets it take one optional word.
      option->expected(0)->expected(0, 1)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    } else if (argument_is_list(field)) {
      option->expected(1, CLI::detail::expected_max_vector_size)->allow_extra_args()->delimiter(',');
    } else {
      option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  }
  // Old names, left out of --help as HF 4.x left them out of its docs.
  for (const RenamedArgument& renamed : renamed_training_arguments()) {
    const ArgumentField& field = *find_training_argument_field(renamed.name);
    auto set = [&args, &field, &renamed](const CLI::results_t& words) {
      std::cerr << "kiln: " << renamed.warning() << "\n";
      try {
        argument_set_text(args, field, words);
      } catch (const Error& error) {
        throw CLI::ValidationError(std::string(error.what()));
      }
      return true;
    };
    app.add_option("--" + std::string(renamed.old_name), CLI::callback_t(set))
        ->group(std::string())
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
}

}  // namespace kiln
