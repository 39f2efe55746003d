// ClassificationDataset: the column rule, the texts, and subsets; labels are in dataset_labels.cpp.
#include "kiln/io/dataset.h"

#include <algorithm>
#include <optional>

#include "kiln/io/dataset_labels.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

struct ChosenColumns {
  size_t text = 0;
  std::optional<size_t> pair;
  std::optional<size_t> label;
};

size_t require_column(const Table& table, const std::string& name, std::string_view flag) {
  std::optional<size_t> index = table.column_index(name);
  if (!index) {
    fail(table.source, "no column '", name, "' (columns: ", table.column_list(), "); choose one with ",
         flag);
  }
  return *index;
}

// The rule of ClassificationColumns (dataset.h).
ChosenColumns choose_columns(const Table& table, const ClassificationOptions& options) {
  const ClassificationColumns& asked = options.columns;
  ChosenColumns chosen;
  std::string label_name = asked.label.empty() ? "label" : asked.label;
  chosen.label = table.column_index(label_name);
  if (!chosen.label && options.require_labels) require_column(table, label_name, "--label_column_name");

  if (!asked.text.empty()) {
    chosen.text = require_column(table, asked.text, "--text_column_name");
  } else if (auto text = table.column_index("text")) {
    chosen.text = *text;
  } else if (auto sentence1 = table.column_index("sentence1")) {
    chosen.text = *sentence1;
    if (asked.text_pair.empty()) chosen.pair = table.column_index("sentence2");
  } else if (table.columns.size() == 2 && chosen.label) {
    chosen.text = 1 - *chosen.label;
  } else {
    require_column(table, "text", "--text_column_name");
  }
  if (!asked.text_pair.empty()) {
    chosen.pair = require_column(table, asked.text_pair, "--text_pair_column_name");
  }
  check(chosen.label != chosen.text, table.source, "column '", table.columns[chosen.text],
        "' cannot be both the text and the label");
  check(!chosen.pair || (*chosen.pair != chosen.text && chosen.pair != chosen.label), table.source,
        "the text pair column '", chosen.pair ? table.columns[*chosen.pair] : "",
        "' is also the text or the label column");
  return chosen;
}

// A text cell: CSV fields and JSON strings; anything else is an error naming the line.
const std::string& text_cell(const Table& table, size_t row, size_t column) {
  const Cell& cell = table.cell(row, column);
  const std::string& name = table.columns[column];
  if (cell.type == CellType::missing) fail(table.where(row), "no column '", name, "'");
  check(cell.type == CellType::raw || cell.type == CellType::string, table.where(row), "column '",
        name, "' is ", cell_type_name(cell.type), ", not a string");
  return cell.text;
}

}  // namespace

int64_t ClassificationDataset::num_labels() const {
  if (label_kind == LabelKind::regression) return 1;
  return static_cast<int64_t>(label_names.size());
}

std::string ClassificationDataset::where(size_t i) const {
  return source + ":" + std::to_string(lines.at(i));
}

ClassificationDataset classification_dataset(const Table& table, const ClassificationOptions& options) {
  ChosenColumns chosen = choose_columns(table, options);
  ClassificationDataset dataset;
  dataset.source = table.source;
  dataset.text_column = table.columns[chosen.text];
  if (chosen.pair) dataset.text_pair_column = table.columns[*chosen.pair];
  dataset.lines = table.lines;
  dataset.texts.reserve(table.size());
  for (size_t r = 0; r < table.size(); ++r) {
    dataset.texts.push_back(text_cell(table, r, chosen.text));
    if (chosen.pair) dataset.text_pairs.push_back(text_cell(table, r, *chosen.pair));
  }
  if (chosen.label) {
    dataset.label_column = table.columns[*chosen.label];
    read_labels(table, *chosen.label, options, dataset);
  } else {
    dataset.label_names = options.label_names;
  }
  return dataset;
}

ClassificationDataset load_classification_dataset(const std::string& path,
                                                  const ClassificationOptions& options) {
  Table table = read_table_file(path, options.table);
  check(table.size() > 0, path, "no examples in the file");
  return classification_dataset(table, options);
}

ClassificationDataset dataset_subset(const ClassificationDataset& dataset,
                                     std::span<const size_t> indices) {
  ClassificationDataset out;
  out.source = dataset.source;
  out.text_column = dataset.text_column;
  out.text_pair_column = dataset.text_pair_column;
  out.label_column = dataset.label_column;
  out.label_kind = dataset.label_kind;
  out.label_names = dataset.label_names;
  for (size_t i : indices) {
    check(i < dataset.size(), dataset.source, "example index ", i, " out of range (", dataset.size(),
          " examples)");
    out.texts.push_back(dataset.texts[i]);
    if (dataset.has_pairs()) out.text_pairs.push_back(dataset.text_pairs[i]);
    out.lines.push_back(dataset.lines[i]);
    if (dataset.label_kind == LabelKind::classes) out.label_ids.push_back(dataset.label_ids[i]);
    if (dataset.label_kind == LabelKind::regression) out.label_values.push_back(dataset.label_values[i]);
    if (dataset.label_kind == LabelKind::multi_label) out.label_sets.push_back(dataset.label_sets[i]);
  }
  return out;
}

bool is_default_label_names(std::span<const std::string> names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "LABEL_" + std::to_string(i)) return false;
  }
  return true;
}

std::string label_names_text(std::span<const std::string> names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

bool same_label_set(std::span<const std::string> model, std::span<const std::string> data) {
  std::vector<std::string> a(model.begin(), model.end()), b(data.begin(), data.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

void warn_labels_replaced(std::ostream& log, std::span<const std::string> model,
                          std::span<const std::string> data) {
  log << "warning: the model's labels (" << label_names_text(model) << ") don't match the "
      << "dataset's (" << label_names_text(data) << "); using the dataset's\n";
}

}  // namespace kiln
