// Text classification datasets as run_glue.py builds them: texts (and optional pairs) and labels
// from a CSV/TSV/JSONL table, string labels mapped to ids in sorted order, float labels as
// regression targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "kiln/io/dataset_table.h"

namespace kiln {

// The columns asked for (--text_column_name, --text_pair_column_name, --label_column_name);
// empty means "by the default rule":
//   label: "label".
//   text:  "text" when the file has it; else "sentence1" (with "sentence2" as the pair when the
//          file has it), as run_glue.py picks GLUE-style files; else, when the file has exactly
//          two columns and one is the label column, the other one. Otherwise an error asks for
//          --text_column_name. (run_glue.py takes the first two non-label columns as a pair;
//          Kiln prefers a column named "text", so the UCI file's `source` is not read as text.)
//   pair:  none, unless named (or "sentence2" with the "sentence1" default).
struct ClassificationColumns {
  std::string text;
  std::string text_pair;
  std::string label;
};

// classes: one label per example; regression: one float target; multi_label: a set of labels
// per example (run_classification.py's list-valued label column, problem_type
// multi_label_classification).
enum class LabelKind { none, classes, regression, multi_label };

struct ClassificationOptions {
  TableOptions table;
  ClassificationColumns columns;
  // id -> name of a label set given by a model config (id2label) or by the training set; empty:
  // inferred from this file. With a label set, a string label not in it is an Error naming
  // file, line and label, and integer labels must be below its size.
  std::vector<std::string> label_names;
  // false for prediction files: a file without the label column loads with LabelKind::none.
  bool require_labels = true;
};

// Labels, as run_glue.py reads them (column types inferred as pandas/Arrow do):
//   integers (CSV fields that all parse as integers, JSON integers): class ids kept as they are,
//     names "0", "1", ... up to the largest id; must be >= 0. (run_glue.py maps the sorted
//     unique values to 0..n-1; the two agree for the usual labels 0..n-1.)
//   any other number (1.5, 1e3, or integers mixed with floats): regression, one float target.
//   strings (a CSV column with any non-number field, JSON strings): ids in sorted order of the
//     unique labels (`label_list.sort()`), unless a label set is given.
//   lists (multi-label, as run_classification.py reads a list-valued label column): a JSON
//     array in JSON Lines or in a CSV/TSV field (["sports", "politics"]), or Python's list repr
//     that pandas writes to CSV (['sports', 'politics']); items are strings or integers, taken
//     by their text (str(label)); names in sorted order unless a label set is given; an empty
//     list is an example with no label. Every label of the column must then be a list.
// Empty or null labels are errors; so is a JSON column mixing strings and numbers.
struct ClassificationDataset {
  std::string source;
  std::string text_column;
  std::string text_pair_column;  // empty: single texts
  std::string label_column;      // empty: no labels (LabelKind::none)
  std::vector<std::string> texts;
  std::vector<std::string> text_pairs;  // empty without a pair column
  std::vector<size_t> lines;            // 1-based line of each example in `source`
  LabelKind label_kind = LabelKind::none;
  std::vector<int32_t> label_ids;        // LabelKind::classes
  std::vector<float> label_values;       // LabelKind::regression
  std::vector<std::vector<int32_t>> label_sets;  // LabelKind::multi_label: sorted label ids
  std::vector<std::string> label_names;  // id -> name: config.json's id2label

  size_t size() const { return texts.size(); }
  bool has_pairs() const { return !text_pair_column.empty(); }
  // HF's num_labels: the label names (classes, or none with a given label set); 1 for regression.
  int64_t num_labels() const;
  // "source:line" of example i, for messages.
  std::string where(size_t i) const;
};

ClassificationDataset classification_dataset(const Table& table,
                                             const ClassificationOptions& options = {});
// Reads the file (format from options.table or the extension) and builds the dataset; a file
// without examples is an Error.
ClassificationDataset load_classification_dataset(const std::string& path,
                                                  const ClassificationOptions& options = {});

// The examples at `indices`, in that order, with the same columns and label set.
ClassificationDataset dataset_subset(const ClassificationDataset& dataset,
                                     std::span<const size_t> indices);

// True for the names transformers gives a config without real ones ("LABEL_0", "LABEL_1", ...):
// such a config carries no label set, and the data's labels decide (as run_glue.py does).
bool is_default_label_names(std::span<const std::string> names);
// "a, b, c": label names for messages.
std::string label_names_text(std::span<const std::string> names);
// Whether a model's labels and a dataset's are the same names in any order: the model's ids are
// then kept, as run_glue.py and run_ner.py do.
bool same_label_set(std::span<const std::string> model, std::span<const std::string> data);
// The scripts' warning when they are not, and the dataset's labels replace the model's.
void warn_labels_replaced(std::ostream& log, std::span<const std::string> model,
                          std::span<const std::string> data);

}  // namespace kiln
