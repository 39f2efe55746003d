// Table helpers, format choice by extension, the UTF-8/NUL check and the file wrapper.
#include "kiln/io/dataset_table.h"

#include <cctype>
#include <cstring>
#include <span>

#include "kiln/io/mapped_file.h"
#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {

const char* cell_type_name(CellType type) {
  switch (type) {
    case CellType::raw: return "text";
    case CellType::string: return "string";
    case CellType::integer: return "integer";
    case CellType::number: return "number";
    case CellType::boolean: return "boolean";
    case CellType::null: return "null";
    case CellType::nested: return "object/array";
    case CellType::missing: return "missing";
  }
  return "?";
}

std::optional<size_t> Table::column_index(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return i;
  }
  return std::nullopt;
}

const Cell& Table::cell(size_t row, size_t column) const {
  static const Cell missing;
  const std::vector<Cell>& cells = rows.at(row);
  return column < cells.size() ? cells[column] : missing;
}

std::string Table::where(size_t row) const {
  return source + ":" + std::to_string(lines.at(row));
}

std::string Table::column_list() const {
  std::string out;
  for (const std::string& name : columns) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

TableFormat table_format_from_path(std::string_view path) {
  auto ends_with = [&](std::string_view suffix) {
    if (path.size() < suffix.size()) return false;
    std::string_view tail = path.substr(path.size() - suffix.size());
    for (size_t i = 0; i < suffix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(tail[i])) != suffix[i]) return false;
    }
    return true;
  };
  if (ends_with(".csv")) return TableFormat::csv;
  if (ends_with(".tsv")) return TableFormat::tsv;
  if (ends_with(".jsonl") || ends_with(".json")) return TableFormat::jsonl;
  fail(path, "unknown data file extension (expected .csv, .tsv, .json or .jsonl)");
}

void check_table_text(std::string_view text, std::string_view source) {
  size_t line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view content = text.substr(start, end - start);
    std::string where = std::string(source) + ":" + std::to_string(line);
    // memchr must not see the null data() of an empty view (an empty file).
    const void* nul = content.empty() ? nullptr : std::memchr(content.data(), '\0', content.size());
    if (nul != nullptr) {
      fail(where, "NUL byte at byte ", static_cast<const char*>(nul) - content.data(),
           " of the line (not a text file?)");
    }
    utf8_decode(content, where);  // throws "[where] invalid UTF-8 at byte N"
    start = end + 1;
    ++line;
  }
}

Table parse_table(std::string_view text, std::string source, const TableOptions& options) {
  check(options.format.has_value(), source, "no data format given");
  switch (*options.format) {
    case TableFormat::csv: return parse_csv(text, std::move(source), options);
    case TableFormat::tsv: return parse_tsv(text, std::move(source), options);
    case TableFormat::jsonl: return parse_jsonl(text, std::move(source));
  }
  fail(source, "unknown data format");
}

Table read_table_file(const std::string& path, const TableOptions& options) {
  TableOptions resolved = options;
  if (!resolved.format) resolved.format = table_format_from_path(path);
  MappedFile file(path);
  std::span<const std::byte> bytes = file.bytes();
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return parse_table(text, path, resolved);
}

}  // namespace kiln
