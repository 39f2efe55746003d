// Conversions of TrainingArguments fields from command-line words and JSON values, and back to
// JSON and to the Python-style text that --help shows.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <type_traits>

#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "kiln/train/log_python_json.h"
#include "kiln/train/training_arguments_fields.h"

namespace kiln {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 3> kIntervalNames = {"no", "steps", "epoch"};
constexpr std::array<std::string_view, 4> kSaveNames = {"no", "steps", "epoch", "best"};
constexpr std::array<std::string_view, 10> kSchedulerNames = {
    "linear",   "cosine",       "cosine_with_restarts", "polynomial",         "constant",
    "constant_with_warmup", "inverse_sqrt", "reduce_lr_on_plateau", "cosine_with_min_lr",
    "warmup_stable_decay"};

template <typename E>
std::span<const std::string_view> enum_names() {
  if constexpr (std::is_same_v<E, IntervalStrategy>) return kIntervalNames;
  else if constexpr (std::is_same_v<E, SaveStrategy>) return kSaveNames;
  else return kSchedulerNames;
}

template <typename T>
constexpr bool is_enum_v = std::is_same_v<T, IntervalStrategy> || std::is_same_v<T, SaveStrategy> ||
                          std::is_same_v<T, LrSchedulerType>;

template <typename T> struct Unwrapped { using type = T; };
template <typename T> struct Unwrapped<std::optional<T>> { using type = T; };
template <typename T> using unwrapped_t = typename Unwrapped<T>::type;
template <typename T> constexpr bool is_optional_v = !std::is_same_v<unwrapped_t<T>, T>;

// The value type a member pointer points at.
template <typename Member>
using slot_t = std::remove_cvref_t<decltype(std::declval<TrainingArguments&>().*std::declval<Member>())>;

// A JSON object written as text (HF json.loads a string given for a dict field); nullopt when
// the text is not one.
std::optional<json> json_object_from_text(const std::string& text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) return std::nullopt;
  return value;
}

template <typename Names>
std::string choices_text(const Names& names, std::string_view separator) {
  std::string text;
  for (std::string_view name : names) {
    if (!text.empty()) text += separator;
    text += name;
  }
  return text;
}

template <typename E>
std::optional<E> enum_from_name(std::string_view name) {
  auto names = enum_names<E>();
  auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) return std::nullopt;
  return static_cast<E>(found - names.begin());
}

template <typename E>
std::string_view enum_name(E value) {
  return enum_names<E>()[static_cast<size_t>(value)];
}

// One command-line word as a plain value (not optional, not a list).
template <typename T>
T value_from_word(const std::string& word, const std::string& flag) {
  if constexpr (std::is_same_v<T, bool>) {
    std::optional<bool> value = parse_bool_word(word);
    if (!value) {
      fail(flag, "Truthy value expected: got '", word,
           "' but expected one of yes/no, true/false, t/f, y/n, 1/0 (case insensitive)");
    }
    return *value;
  } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
    // Python's int() and float() accept a leading '+'; from_chars does not.
    std::string_view text = word;
    if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
    T value{};
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      fail(flag, "expected ", std::is_same_v<T, double> ? "a number" : "an integer", ", got '",
           word, "'");
    }
    return value;
  } else if constexpr (is_enum_v<T>) {
    std::optional<T> value = enum_from_name<T>(word);
    if (!value) fail(flag, "'", word, "' is not one of: ", choices_text(enum_names<T>(), ", "));
    return *value;
  } else if constexpr (std::is_same_v<T, json>) {
    std::optional<json> value = json_object_from_text(word);
    if (!value) fail(flag, "expected a JSON object such as '{\"num_cycles\": 2}', got '", word, "'");
    return *value;
  } else {
    return word;
  }
}

// A JSON value as a plain value; nullopt when its type does not fit.
template <typename T>
std::optional<T> value_from_json(const json& value) {
  if constexpr (std::is_same_v<T, bool>) {
    if (value.is_boolean()) return value.get<bool>();
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (value.is_number_integer()) return value.get<int64_t>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (value.is_number()) return value.get<double>();
  } else if constexpr (is_enum_v<T>) {
    if (value.is_string()) return enum_from_name<T>(value.get<std::string>());
  } else if constexpr (std::is_same_v<T, json>) {
    if (value.is_object()) return value;
    if (value.is_string()) return json_object_from_text(value.get<std::string>());
  } else {
    if (value.is_string()) return value.get<std::string>();
    // HF's Union[bool, str] fields (include_num_input_tokens_seen, resume_from_checkpoint) are
    // written as JSON booleans; their words "true"/"false" mean the same here.
    if (value.is_boolean()) return std::string(value.get<bool>() ? "true" : "false");
  }
  return std::nullopt;
}

template <typename T>
std::string expected_json(bool optional) {
  std::string text;
  if constexpr (std::is_same_v<T, bool>) text = "true or false";
  else if constexpr (std::is_same_v<T, int64_t>) text = "an integer";
  else if constexpr (std::is_same_v<T, double>) text = "a number";
  else if constexpr (is_enum_v<T>) text = "one of \"" + choices_text(enum_names<T>(), "\", \"") + "\"";
  else if constexpr (std::is_same_v<T, json>) text = "a JSON object";
  else text = "a string";
  return optional ? text + " or null" : text;
}

template <typename T>
json value_to_json(const T& value) {
  if constexpr (is_enum_v<T>) return std::string(enum_name(value));
  else return value;
}

template <typename T>
std::string value_to_text(const T& value) {
  if constexpr (std::is_same_v<T, bool>) return value ? "True" : "False";
  else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(value);
  else if constexpr (std::is_same_v<T, double>) return python_float_repr(value);
  else if constexpr (is_enum_v<T>) return std::string(enum_name(value));
  else if constexpr (std::is_same_v<T, json>) return value.dump();
  else return value;
}

}  // namespace

std::string_view interval_strategy_name(IntervalStrategy strategy) { return enum_name(strategy); }
std::string_view save_strategy_name(SaveStrategy strategy) { return enum_name(strategy); }
std::string_view lr_scheduler_type_name(LrSchedulerType type) { return enum_name(type); }
std::optional<LrSchedulerType> lr_scheduler_type_from_name(std::string_view name) {
  return enum_from_name<LrSchedulerType>(name);
}

std::optional<bool> parse_bool_word(std::string_view word) {
  std::string lower(word);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* yes : {"yes", "true", "t", "y", "1"}) {
    if (lower == yes) return true;
  }
  for (const char* no : {"no", "false", "f", "n", "0"}) {
    if (lower == no) return false;
  }
  return std::nullopt;
}

bool argument_is_bool(const ArgumentField& field) {
  return std::visit(
      [](auto member) { return std::is_same_v<unwrapped_t<slot_t<decltype(member)>>, bool>; },
      field.member);
}

bool argument_takes_bare_flag(const ArgumentField& field) {
  return field.bare_flag_means_true || argument_is_bool(field);
}

bool argument_is_list(const ArgumentField& field) {
  return std::holds_alternative<std::vector<std::string> TrainingArguments::*>(field.member);
}

std::string argument_type_name(const ArgumentField& field) {
  std::vector<std::string_view> choices = argument_choices(field);
  if (!choices.empty()) return "{" + choices_text(choices, ",") + "}";
  return std::visit(
      [](auto member) -> std::string {
        using T = unwrapped_t<slot_t<decltype(member)>>;
        if constexpr (std::is_same_v<T, bool>) return "BOOL";
        else if constexpr (std::is_same_v<T, int64_t>) return "INT";
        else if constexpr (std::is_same_v<T, double>) return "FLOAT";
        else if constexpr (std::is_same_v<T, json>) return "JSON";
        else return "TEXT";
      },
      field.member);
}

std::vector<std::string_view> argument_choices(const ArgumentField& field) {
  return std::visit(
      [&field](auto member) -> std::vector<std::string_view> {
        using T = unwrapped_t<slot_t<decltype(member)>>;
        if constexpr (is_enum_v<T>) {
          auto names = enum_names<T>();
          return {names.begin(), names.end()};
        } else {
          return {field.choices.begin(), field.choices.end()};
        }
      },
      field.member);
}

void argument_check_choices(const TrainingArguments& args, const ArgumentField& field) {
  if (field.choices.empty()) return;
  auto check_one = [&field](std::string_view value) {
    check_usage(std::find(field.choices.begin(), field.choices.end(), value) != field.choices.end(),
                "--" + std::string(field.name), "'", value,
                "' is not one of: ", choices_text(field.choices, ", "));
  };
  std::visit(
      [&](auto member) {
        const auto& slot = args.*member;
        using Slot = slot_t<decltype(member)>;
        if constexpr (std::is_same_v<Slot, std::vector<std::string>>) {
          for (const std::string& item : slot) check_one(item);
        } else if constexpr (std::is_same_v<Slot, std::string>) {
          check_one(slot);
        } else if constexpr (std::is_same_v<Slot, std::optional<std::string>>) {
          if (slot) check_one(*slot);
        }
      },
      field.member);
}

void argument_set_text(TrainingArguments& args, const ArgumentField& field,
                       std::span<const std::string> words) {
  const std::string flag = "--" + std::string(field.name);
  std::visit(
      [&](auto member) {
        using Slot = slot_t<decltype(member)>;
        if constexpr (std::is_same_v<Slot, std::vector<std::string>>) {
          check(!words.empty(), flag, "expects at least one value");
          (args.*member).assign(words.begin(), words.end());
        } else {
          using T = unwrapped_t<Slot>;
          // A bare bool flag (--do_train) means true, as HfArgumentParser's nargs="?" const=True.
          if constexpr (std::is_same_v<T, bool>) {
            if (words.empty() || (words.size() == 1 && words[0].empty())) {
              args.*member = true;
              return;
            }
          }
          check(words.size() == 1, flag, "expects one value, got ", words.size());
          args.*member = value_from_word<T>(words[0], flag);
        }
      },
      field.member);
}

void argument_set_json(TrainingArguments& args, const ArgumentField& field, const json& value,
                       std::string_view where) {
  std::visit(
      [&](auto member) {
        using Slot = slot_t<decltype(member)>;
        auto wrong = [&](const std::string& expected) {
          std::string shown = value.dump();
          if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
          fail(where, "key '", field.name, "': expected ", expected, ", got ", shown);
        };
        if constexpr (std::is_same_v<Slot, std::vector<std::string>>) {
          // HF accepts one string or a list of them.
          if (value.is_string()) {
            args.*member = {value.get<std::string>()};
            return;
          }
          if (!value.is_array()) wrong("a string or a list of strings");
          std::vector<std::string> items;
          for (const json& item : value) {
            if (!item.is_string()) wrong("a string or a list of strings");
            items.push_back(item.get<std::string>());
          }
          args.*member = std::move(items);
        } else {
          using T = unwrapped_t<Slot>;
          if constexpr (is_optional_v<Slot>) {
            if (value.is_null()) {
              args.*member = std::nullopt;
              return;
            }
          }
          std::optional<T> converted = value_from_json<T>(value);
          if (!converted) wrong(expected_json<T>(is_optional_v<Slot>));
          args.*member = std::move(*converted);
        }
      },
      field.member);
}

json argument_json(const TrainingArguments& args, const ArgumentField& field) {
  return std::visit(
      [&](auto member) -> json {
        const auto& slot = args.*member;
        using Slot = slot_t<decltype(member)>;
        if constexpr (std::is_same_v<Slot, std::vector<std::string>>) {
          return slot;
        } else if constexpr (is_optional_v<Slot>) {
          return slot ? value_to_json(*slot) : json(nullptr);
        } else {
          return value_to_json(slot);
        }
      },
      field.member);
}

std::string argument_text(const TrainingArguments& args, const ArgumentField& field) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& slot = args.*member;
        using Slot = slot_t<decltype(member)>;
        if constexpr (std::is_same_v<Slot, std::vector<std::string>>) {
          return choices_text(slot, " ");
        } else if constexpr (is_optional_v<Slot>) {
          return slot ? value_to_text(*slot) : "None";
        } else {
          return value_to_text(slot);
        }
      },
      field.member);
}

}  // namespace kiln
