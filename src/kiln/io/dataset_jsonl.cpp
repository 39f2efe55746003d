// JSON Lines parsing: one object per line, each value kept with its JSON type.
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "kiln/io/dataset_table.h"
#include "kiln/io/json_util.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

// ordered_json keeps the keys in file order, so columns appear as the file lists them.
Cell json_cell(const nlohmann::ordered_json& value) {
  using Type = nlohmann::ordered_json::value_t;
  switch (value.type()) {
    case Type::string: return {CellType::string, value.get<std::string>()};
    case Type::number_integer:
    case Type::number_unsigned: return {CellType::integer, value.dump()};
    case Type::number_float: return {CellType::number, value.dump()};
    case Type::boolean: return {CellType::boolean, value.dump()};
    case Type::null: return {CellType::null, ""};
    default: return {CellType::nested, value.dump()};
  }
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

Table parse_jsonl(std::string_view text, std::string source) {
  check_table_text(text, source);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  Table table;
  table.source = std::move(source);
  std::unordered_map<std::string, size_t> column_of;
  size_t line = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view content = text.substr(start, end - start);
    start = end + 1;
    ++line;
    if (is_blank(content)) continue;
    std::string where = table.source + ":" + std::to_string(line);
    nlohmann::ordered_json object = json_parse<nlohmann::ordered_json>(content, where);
    check(object.is_object(), where, "expected a JSON object, got ", object.type_name());
    std::vector<Cell> cells(table.columns.size());
    for (auto& [key, value] : object.items()) {
      auto [it, added] = column_of.emplace(key, table.columns.size());
      if (added) table.columns.push_back(key);
      if (cells.size() <= it->second) cells.resize(it->second + 1);
      cells[it->second] = json_cell(value);
    }
    table.rows.push_back(std::move(cells));
    table.lines.push_back(line);
  }
  return table;
}

}  // namespace kiln
