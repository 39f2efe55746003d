// Tabular data files (CSV, TSV, JSON Lines) read into one Table of cells, each row knowing its
// line; errors name the file and the 1-based line. Parsers take a buffer (for fuzzing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// What a cell held. CSV/TSV fields are untyped text (`raw`: the column's type is inferred
// later, as pandas does); JSON values keep their JSON type. `missing`: a JSON object without
// the key.
enum class CellType : uint8_t { raw, string, integer, number, boolean, null, nested, missing };

const char* cell_type_name(CellType type);

struct Cell {
  CellType type = CellType::missing;
  std::string text;  // the field, the JSON string, or the JSON dump of any other value
};

struct Table {
  std::string source;                // the file name (or buffer name) errors give
  std::vector<std::string> columns;  // in file order (JSONL: order of first appearance)
  std::vector<std::vector<Cell>> rows;
  std::vector<size_t> lines;  // 1-based line where each row starts

  size_t size() const { return rows.size(); }
  std::optional<size_t> column_index(std::string_view name) const;
  // The cell, or a `missing` one when the row is shorter (JSONL rows before a key appeared).
  const Cell& cell(size_t row, size_t column) const;
  // "source:line" of a row: the `where` of its error messages.
  std::string where(size_t row) const;
  // "a, b, c": the column names for messages.
  std::string column_list() const;
};

enum class TableFormat { csv, tsv, jsonl };

struct TableOptions {
  std::optional<TableFormat> format;  // unset: from the extension (.csv, .tsv, .json/.jsonl)
  // CSV/TSV: the first line names the columns (as Hugging Face's csv loader reads every file).
  // A headerless file (the UCI sentiment TSV) needs header = false; its columns are then
  // named by `column_names` or "0", "1", ... as pandas names them.
  bool header = true;
  // CSV/TSV: names for the columns; with header = true they replace the header's names.
  std::vector<std::string> column_names;
};

// The format named by a path's extension; other extensions are an Error naming the path.
TableFormat table_format_from_path(std::string_view path);

// RFC 4180 CSV as pandas reads it: quoted fields ("" is a quote, newlines allowed inside),
// CRLF or LF line ends, an optional UTF-8 BOM, blank lines skipped, text after a closing quote
// appended to the field. Every row must have as many fields as the header.
Table parse_csv(std::string_view text, std::string source, const TableOptions& options);
// Tab-separated values (IANA text/tab-separated-values): no quoting — a '"' is an ordinary
// character, as in the UCI file where quotes open sentences and never close — otherwise as CSV.
Table parse_tsv(std::string_view text, std::string source, const TableOptions& options);
// One JSON object per line; blank lines skipped; columns are the union of the keys.
Table parse_jsonl(std::string_view text, std::string source);

// Dispatches on options.format (which must be set).
Table parse_table(std::string_view text, std::string source, const TableOptions& options);
// Reads `path` (memory-mapped); the format from options or the extension.
Table read_table_file(const std::string& path, const TableOptions& options = {});

// Checks that the whole buffer is valid UTF-8 without NUL bytes; errors name source:line.
void check_table_text(std::string_view text, std::string_view source);

}  // namespace kiln
