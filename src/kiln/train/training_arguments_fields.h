// The table of TrainingArguments fields (HF name, member, help) and the conversions that the
// command line, the JSON file reader and training_args.json share.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/train/training_arguments.h"

namespace kiln {

using ArgumentMember =
    std::variant<bool TrainingArguments::*, std::optional<bool> TrainingArguments::*,
                 int64_t TrainingArguments::*, std::optional<int64_t> TrainingArguments::*,
                 double TrainingArguments::*, std::optional<double> TrainingArguments::*,
                 std::string TrainingArguments::*, std::optional<std::string> TrainingArguments::*,
                 std::vector<std::string> TrainingArguments::*,
                 IntervalStrategy TrainingArguments::*, SaveStrategy TrainingArguments::*,
                 LrSchedulerType TrainingArguments::*,
                 nlohmann::json TrainingArguments::*>;

struct ArgumentField {
  std::string_view name;  // as in HF, without the leading "--"
  ArgumentMember member;
  std::string_view group;  // the --help section
  std::string_view help;
  // The values a text field (or each item of a list field) may take, listed by --help and
  // checked by post-init; empty: any. Enum fields take their choices from the enum.
  std::span<const std::string_view> choices = {};
  // HF's Union[bool, str] fields, which transformers 4.x declared bool: a bare flag means "true".
  bool bare_flag_means_true = false;
};

// Every field, in --help order.
std::span<const ArgumentField> training_argument_fields();
// nullptr when no field has that name.
const ArgumentField* find_training_argument_field(std::string_view name);

// Old names that transformers 4.x still accepted with a FutureWarning (evaluation_strategy).
struct RenamedArgument {
  std::string_view old_name;
  std::string_view name;
  // The warning, as transformers 4.x printed it.
  std::string warning() const;
};
std::span<const RenamedArgument> renamed_training_arguments();
// The field an old name stands for; nullptr for any other name.
const RenamedArgument* find_renamed_training_argument(std::string_view old_name);

// Kinds of fields that the command line treats specially.
bool argument_is_bool(const ArgumentField& field);  // a flag with an optional true/false value
// A bool, or a field that takes a bare flag as "true": the word after it is optional.
bool argument_takes_bare_flag(const ArgumentField& field);
bool argument_is_list(const ArgumentField& field);
// What --help shows for the value: BOOL, INT, FLOAT, TEXT, or the choices {a,b,c}.
std::string argument_type_name(const ArgumentField& field);
// The field's choices (its own, or its enum's names); empty when any value goes.
std::vector<std::string_view> argument_choices(const ArgumentField& field);
// Throws UsageError "[--name] 'value' is not one of: a, b, c" when a field with choices holds
// another value.
void argument_check_choices(const TrainingArguments& args, const ArgumentField& field);

// Sets the field from command-line words: one word, none for a bare bool flag, several for a
// list. Errors read "[--name] ...".
void argument_set_text(TrainingArguments& args, const ArgumentField& field,
                       std::span<const std::string> words);
// Sets the field from a JSON value; errors read "[where] key 'name': ...".
void argument_set_json(TrainingArguments& args, const ArgumentField& field,
                       const nlohmann::json& value, std::string_view where);
nlohmann::json argument_json(const TrainingArguments& args, const ArgumentField& field);
// The value as Python prints it (True, None, 5e-05, 3.0), for --help.
std::string argument_text(const TrainingArguments& args, const ArgumentField& field);

// HF's string_to_bool: yes/true/t/y/1 and no/false/f/n/0, any case; nullopt otherwise.
std::optional<bool> parse_bool_word(std::string_view word);

}  // namespace kiln
