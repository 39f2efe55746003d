// run_ner.py's data: word and tag lists from JSON lines, its label list and its label alignment.
#include "kiln/io/ner_dataset.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <unordered_map>

#include "kiln/io/dataset.h"
#include "kiln/io/dataset_table.h"
#include "kiln/io/json_util.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

// run_ner.py's choice: the flag, else the usual name when the file has it, else the column at
// `position`; empty when there is none.
std::string column_name(const Table& table, const std::string& flag, const char* usual,
                        size_t position) {
  if (!flag.empty()) return flag;
  if (table.column_index(usual)) return usual;
  return position < table.columns.size() ? table.columns[position] : "";
}

// The row's JSON list in `column` (`flag` names the column's flag, `items` its contents).
nlohmann::json list_of(const Table& table, size_t row, const std::string& column, const char* flag,
                       const char* items) {
  const std::string where = table.where(row);
  const std::optional<size_t> index = table.column_index(column);
  check(index && table.cell(row, *index).type != CellType::missing, where, "the row has no \"",
        column, "\" (", flag, ")");
  const Cell& cell = table.cell(row, *index);
  check(cell.type == CellType::nested, where, "\"", column, "\" must be a list of ", items,
        ", not ", cell_type_name(cell.type));
  nlohmann::json list = json_parse(cell.text, where);
  check(list.is_array(), where, "\"", column, "\" must be a list of ", items, ", not an object");
  return list;
}

std::vector<std::string> words_of(const Table& table, size_t row, const std::string& column) {
  std::vector<std::string> words;
  for (const nlohmann::json& word : list_of(table, row, column, "--text_column_name", "words")) {
    check(word.is_string(), table.where(row), "\"", column, "\" must hold strings, not ",
          word.dump());
    words.push_back(word.get<std::string>());
  }
  return words;
}

// The tags as strings; `integers` tells whether they were JSON integers (each row must agree).
std::vector<std::string> tags_of(const Table& table, size_t row, const std::string& column,
                                 std::optional<bool>& integers) {
  std::vector<std::string> tags;
  for (const nlohmann::json& tag : list_of(table, row, column, "--label_column_name", "tags")) {
    const bool integer = tag.is_number_integer();
    check(integer || tag.is_string(), table.where(row), "\"", column,
          "\" must hold strings or integers, not ", tag.dump());
    check(!tag.is_number_unsigned() ||
              tag.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
          table.where(row), "\"", column, "\" holds the tag ", tag.dump(),
          ", beyond the 64-bit integers");
    if (!integers) integers = integer;
    check(*integers == integer, table.where(row), "\"", column, "\" mixes ",
          integer ? "integer tags with the string tags" : "string tags with the integer tags",
          " of the rows before");
    tags.push_back(integer ? tag.dump() : tag.get<std::string>());
  }
  return tags;
}

}  // namespace

std::string NerDataset::where(size_t row) const {
  return source + ":" + std::to_string(lines.at(row));
}

void NerDataset::keep_first(size_t count) {
  if (count >= size()) return;
  words.resize(count);
  lines.resize(count);
  if (has_tags()) tags.resize(count);
}

NerDataset read_ner_dataset(const std::string& path, const NerColumns& columns,
                            bool require_tags) {
  const std::string extension = std::filesystem::path(path).extension().string();
  check(extension == ".json" || extension == ".jsonl", path,
        "token classification reads JSON lines (.json or .jsonl) of word and tag lists");
  check(std::filesystem::is_regular_file(path), path, "no such file");
  TableOptions format;
  format.format = TableFormat::jsonl;
  return ner_dataset(read_table_file(path, format), columns, require_tags);
}

NerDataset ner_dataset(const Table& table, const NerColumns& columns, bool require_tags) {
  NerDataset data;
  data.source = table.source;
  data.lines = table.lines;
  const std::string text = column_name(table, columns.text, "tokens", 0);
  const std::string label = column_name(table, columns.label, "ner_tags", 1);
  const bool with_tags =
      require_tags || (!label.empty() && table.column_index(label).has_value());
  std::optional<bool> integers;
  for (size_t row = 0; row < table.size(); ++row) {
    data.words.push_back(words_of(table, row, text));
    if (!with_tags) continue;
    check(!label.empty(), table.where(row), "the rows have no tag column (--label_column_name)");
    data.tags.push_back(tags_of(table, row, label, integers));
    check(data.tags.back().size() == data.words.back().size(), table.where(row),
          data.tags.back().size(), " tags (\"", label, "\") for ", data.words.back().size(),
          " words (\"", text, "\")");
  }
  data.integer_tags = integers.value_or(false);
  return data;
}

std::vector<std::string> ner_label_list(const NerDataset& data) {
  std::set<std::string> distinct;
  for (const std::vector<std::string>& row : data.tags) distinct.insert(row.begin(), row.end());
  std::vector<std::string> labels(distinct.begin(), distinct.end());
  if (data.integer_tags) {
    std::sort(labels.begin(), labels.end(), [](const std::string& a, const std::string& b) {
      return std::stoll(a) < std::stoll(b);
    });
  }
  return labels;
}

NerFeatures ner_features(const Tokenizer& tokenizer, const NerDataset& data,
                         const std::vector<std::string>& label_list,
                         const NerFeatureOptions& options) {
  std::unordered_map<std::string, int32_t> label_to_id;
  for (size_t i = 0; i < label_list.size(); ++i) {
    label_to_id.emplace(label_list[i], static_cast<int32_t>(i));
  }
  // run_ner.py's b_to_i_label: B-X's id to I-X's when the list has I-X.
  std::vector<int32_t> b_to_i(label_list.size());
  for (size_t i = 0; i < label_list.size(); ++i) {
    const std::string& name = label_list[i];
    auto inside = name.starts_with("B-") ? label_to_id.find("I-" + name.substr(2))
                                         : label_to_id.end();
    b_to_i[i] = inside != label_to_id.end() ? inside->second : static_cast<int32_t>(i);
  }
  EncodeOptions encode;
  encode.truncation = Truncation::longest_first;
  encode.max_length = options.max_seq_length;
  NerFeatures features;
  for (size_t row = 0; row < data.size(); ++row) {
    Encoding& encoding = features.encodings.emplace_back(
        tokenizer.encode_words(data.words[row], encode));
    encoding.overflowing.clear();
    std::vector<int32_t>& labels = features.labels.emplace_back();
    int32_t previous = -1;
    for (int32_t word : encoding.word_ids) {
      int32_t label = kIgnoredLabel;
      if (word >= 0 && (word != previous || options.label_all_tokens)) {
        label = 0;
        if (data.has_tags()) {
          const std::string& tag = data.tags[row][static_cast<size_t>(word)];
          auto found = label_to_id.find(tag);
          check(found != label_to_id.end(), data.where(row), "the tag \"", tag,
                "\" is not one of the labels (", label_names_text(label_list), ")");
          label = word != previous ? found->second : b_to_i[static_cast<size_t>(found->second)];
        }
      }
      labels.push_back(label);
      previous = word;
    }
  }
  return features;
}

}  // namespace kiln
