// Label parsing: the column's type as pandas/Arrow infer it, then ids, names or float targets.
#include "kiln/io/dataset_labels.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

// Above this an integer label is surely not a class id (and would need that many names).
constexpr int64_t kMaxClassId = 100000;

enum class Category { integer, number, string };

std::string_view trim_spaces(std::string_view text) {
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  size_t last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::optional<int64_t> parse_integer(std::string_view text) {
  text = trim_spaces(text);
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_number(std::string_view text) {
  text = trim_spaces(text);
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

const char* category_name(Category category) {
  return category == Category::string ? "a string" : "a number";
}

// Each cell's category; a CSV column is text as soon as one field is not a number (pandas'
// object dtype), JSON cells keep their type. Empty, null and other labels are errors.
std::vector<Category> categorize(const Table& table, size_t column, const std::string& name) {
  std::vector<Category> categories(table.size());
  bool raw_text = false;
  for (size_t r = 0; r < table.size(); ++r) {
    const Cell& cell = table.cell(r, column);
    std::string where = table.where(r);
    switch (cell.type) {
      case CellType::raw:
        check(!trim_spaces(cell.text).empty(), where, "empty label in column '", name, "'");
        if (parse_integer(cell.text)) {
          categories[r] = Category::integer;
        } else if (parse_number(cell.text)) {
          categories[r] = Category::number;
        } else {
          categories[r] = Category::string;
          raw_text = true;
        }
        break;
      case CellType::string: categories[r] = Category::string; break;
      case CellType::integer: categories[r] = Category::integer; break;
      case CellType::number: categories[r] = Category::number; break;
      case CellType::missing: fail(where, "no column '", name, "'");
      case CellType::null: fail(where, "empty label (null) in column '", name, "'");
      default:
        fail(where, "label of type ", cell_type_name(cell.type), " in column '", name,
             "' (expected a string or a number)");
    }
  }
  if (raw_text) std::fill(categories.begin(), categories.end(), Category::string);
  for (size_t r = 1; r < categories.size(); ++r) {
    bool first_string = categories[0] == Category::string;
    check(first_string == (categories[r] == Category::string), table.where(r), "label '",
          table.cell(r, column).text, "' is ", category_name(categories[r]), " but the label on line ",
          table.lines[0], " is ", category_name(categories[0]));
  }
  return categories;
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

using LabelIds = std::map<std::string, int32_t, std::less<>>;

// Sets dataset.label_names to the given set (a model's id2label), else to the sorted unique
// labels `seen` (run_glue.py and run_classification.py: label_list.sort()); returns each
// name's id.
LabelIds name_label_ids(std::vector<std::string> seen, const ClassificationOptions& options,
                        ClassificationDataset& dataset) {
  dataset.label_names = options.label_names;
  if (dataset.label_names.empty()) {
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    dataset.label_names = std::move(seen);
  }
  LabelIds ids;
  for (size_t i = 0; i < dataset.label_names.size(); ++i) {
    ids.emplace(dataset.label_names[i], static_cast<int32_t>(i));
  }
  return ids;
}

// The id of `label`; a label outside the set is an Error naming where it is.
int32_t label_id(const LabelIds& ids, const std::string& label, const std::string& where,
                 const ClassificationDataset& dataset) {
  auto it = ids.find(label);
  if (it == ids.end()) {
    fail(where, "unknown label '", label, "' (labels: ", name_list(dataset.label_names), ")");
  }
  return it->second;
}

void read_string_labels(const Table& table, size_t column, const ClassificationOptions& options,
                        ClassificationDataset& dataset) {
  std::vector<std::string> seen;
  for (size_t r = 0; r < table.size(); ++r) seen.push_back(table.cell(r, column).text);
  const LabelIds ids = name_label_ids(std::move(seen), options, dataset);
  for (size_t r = 0; r < table.size(); ++r) {
    dataset.label_ids.push_back(label_id(ids, table.cell(r, column).text, table.where(r), dataset));
  }
}

void read_integer_labels(const Table& table, size_t column, const ClassificationOptions& options,
                         ClassificationDataset& dataset) {
  int64_t largest = -1;
  for (size_t r = 0; r < table.size(); ++r) {
    int64_t id = *parse_integer(table.cell(r, column).text);
    std::string where = table.where(r);
    check(id >= 0, where, "label ", id, " is negative: integer labels are class ids");
    if (!options.label_names.empty()) {
      check(id < static_cast<int64_t>(options.label_names.size()), where, "label ", id,
            " is out of range: there are ", options.label_names.size(), " labels (",
            name_list(options.label_names), ")");
    }
    check(id < kMaxClassId, where, "label ", id,
          " is too large for a class id (write regression targets as floats, e.g. 3.0)");
    largest = std::max(largest, id);
    dataset.label_ids.push_back(static_cast<int32_t>(id));
  }
  dataset.label_names = options.label_names;
  if (dataset.label_names.empty()) {
    for (int64_t id = 0; id <= largest; ++id) dataset.label_names.push_back(std::to_string(id));
  }
}

void read_regression_labels(const Table& table, size_t column, const ClassificationOptions& options,
                            ClassificationDataset& dataset) {
  check(options.label_names.size() <= 1, table.source, "labels are numbers (regression) but ",
        options.label_names.size(), " class labels were given (", name_list(options.label_names),
        ")");
  for (size_t r = 0; r < table.size(); ++r) {
    double value = *parse_number(table.cell(r, column).text);
    check(std::isfinite(value), table.where(r), "label ", table.cell(r, column).text,
          " is not a finite number");
    dataset.label_values.push_back(static_cast<float>(value));
  }
}

// Whether a cell holds a list of labels: a JSON array (JSON Lines) or a CSV/TSV field in
// brackets.
bool is_list_cell(const Cell& cell) {
  std::string_view text = trim_spaces(cell.text);
  if (cell.type == CellType::nested) return text.starts_with('[');
  return cell.type == CellType::raw && text.starts_with('[') && text.ends_with(']');
}

// The items of Python's list repr as pandas writes it (['a', "it's", 3]): quoted strings (with
// backslash escapes) or bare words, separated by commas.
std::vector<std::string> python_list_items(std::string_view inner, const std::string& where) {
  std::vector<std::string> items;
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == '\t')) ++i;
  };
  skip_spaces();
  while (i < inner.size()) {
    std::string item;
    if (inner[i] == '\'' || inner[i] == '"') {
      const char quote = inner[i++];
      while (i < inner.size() && inner[i] != quote) {
        if (inner[i] == '\\' && i + 1 < inner.size()) ++i;
        item += inner[i++];
      }
      check(i < inner.size(), where, "unterminated string in the label list");
      ++i;
    } else {
      size_t end = inner.find(',', i);
      const size_t length = end == std::string_view::npos ? end : end - i;
      item = std::string(trim_spaces(inner.substr(i, length)));
      check(!item.empty(), where, "empty item in the label list");
      i = end == std::string_view::npos ? inner.size() : end;
    }
    items.push_back(std::move(item));
    skip_spaces();
    if (i == inner.size()) break;
    check(inner[i] == ',', where, "expected ',' between the labels of the list, found '",
          inner[i], "'");
    ++i;
    skip_spaces();
    check(i < inner.size(), where, "the label list ends with ','");
  }
  return items;
}

// The labels of a list cell, by their text: JSON strings as they are, JSON integers printed.
std::vector<std::string> label_list(const Cell& cell, const std::string& where) {
  nlohmann::json array = nlohmann::json::parse(cell.text, nullptr, /*allow_exceptions=*/false);
  if (array.is_discarded()) {
    std::string_view text = trim_spaces(cell.text);
    return python_list_items(text.substr(1, text.size() - 2), where);
  }
  std::vector<std::string> labels;
  for (const nlohmann::json& item : array) {
    if (item.is_string()) {
      labels.push_back(item.get<std::string>());
    } else {
      check(item.is_number_integer(), where, "label ", item.dump(),
            " in the list is not a string or an integer");
      labels.push_back(item.dump());
    }
  }
  return labels;
}

// `first_list`: the row of the column's first list, which makes every label a list.
void read_label_lists(const Table& table, size_t column, size_t first_list,
                      const ClassificationOptions& options, ClassificationDataset& dataset) {
  std::vector<std::vector<std::string>> lists;
  for (size_t r = 0; r < table.size(); ++r) {
    const Cell& cell = table.cell(r, column);
    check(is_list_cell(cell), table.where(r), "label '", cell.text, "' is not a list, but the ",
          "label on line ", table.lines[first_list],
          " is (multi-label): write it as [] or [\"name\", ...]");
    lists.push_back(label_list(cell, table.where(r)));
  }
  std::vector<std::string> seen;
  for (const auto& list : lists) seen.insert(seen.end(), list.begin(), list.end());
  const LabelIds id_of = name_label_ids(std::move(seen), options, dataset);
  for (size_t r = 0; r < lists.size(); ++r) {
    std::vector<int32_t> ids;
    for (const std::string& label : lists[r]) {
      ids.push_back(label_id(id_of, label, table.where(r), dataset));
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    dataset.label_sets.push_back(std::move(ids));
  }
}

}  // namespace

void read_labels(const Table& table, size_t column, const ClassificationOptions& options,
                 ClassificationDataset& dataset) {
  const std::string& name = table.columns[column];
  for (size_t r = 0; r < table.size(); ++r) {
    if (!is_list_cell(table.cell(r, column))) continue;
    dataset.label_kind = LabelKind::multi_label;
    read_label_lists(table, column, r, options, dataset);
    return;
  }
  std::vector<Category> categories = categorize(table, column, name);
  bool any_number = std::find(categories.begin(), categories.end(), Category::number) != categories.end();
  if (!categories.empty() && categories[0] == Category::string) {
    dataset.label_kind = LabelKind::classes;
    read_string_labels(table, column, options, dataset);
  } else if (any_number) {
    dataset.label_kind = LabelKind::regression;
    read_regression_labels(table, column, options, dataset);
  } else {
    dataset.label_kind = LabelKind::classes;
    read_integer_labels(table, column, options, dataset);
  }
}

}  // namespace kiln
