// CSV and TSV parsing: records with their starting line, then the header and the column check.
#include <utility>

#include "kiln/io/dataset_table.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

struct Record {
  size_t line = 0;
  std::vector<std::string> fields;
};

// Splits `text` into records; `quoting` turns on RFC 4180 quotes. Line ends are LF or CRLF
// (a lone CR is data); empty lines are skipped as pandas' skip_blank_lines does.
class RecordReader {
 public:
  RecordReader(std::string_view text, std::string_view source, char delimiter, bool quoting)
      : text_(text), source_(source), delimiter_(delimiter), quoting_(quoting) {
    if (text_.substr(0, kBom.size()) == kBom) text_.remove_prefix(kBom.size());
  }

  std::vector<Record> read_all() {
    std::vector<Record> records;
    while (pos_ < text_.size()) {
      if (size_t n = line_end_length(); n > 0) {  // blank line
        pos_ += n;
        ++line_;
        continue;
      }
      records.push_back(read_record());
    }
    return records;
  }

 private:
  // Length of the line end at pos_ (1 for LF, 2 for CRLF), 0 when there is none.
  size_t line_end_length() const {
    if (pos_ >= text_.size()) return 0;
    if (text_[pos_] == '\n') return 1;
    if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') return 2;
    return 0;
  }

  Record read_record() {
    Record record{line_, {}};
    while (true) {
      std::string field;
      if (quoting_ && pos_ < text_.size() && text_[pos_] == '"') read_quoted(field);
      // Unquoted text; after a closing quote it is appended too (pandas and Python's csv).
      while (pos_ < text_.size() && text_[pos_] != delimiter_ && line_end_length() == 0) {
        field += text_[pos_++];
      }
      record.fields.push_back(std::move(field));
      if (pos_ < text_.size() && text_[pos_] == delimiter_) {
        ++pos_;
        continue;
      }
      if (size_t n = line_end_length(); n > 0) {
        pos_ += n;
        ++line_;
      }
      return record;
    }
  }

  void read_quoted(std::string& field) {
    size_t open_line = line_;
    ++pos_;  // the opening quote
    while (true) {
      if (pos_ >= text_.size()) {
        fail(std::string(source_) + ":" + std::to_string(open_line),
             "unterminated quoted field (the quote opened on this line never closes)");
      }
      char c = text_[pos_];
      if (c == '"') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {  // "" is one quote
          field += '"';
          pos_ += 2;
          continue;
        }
        ++pos_;
        return;
      }
      if (c == '\n') ++line_;
      field += c;
      ++pos_;
    }
  }

  std::string_view text_;
  std::string_view source_;
  char delimiter_;
  bool quoting_;
  size_t pos_ = 0;
  size_t line_ = 1;
};

std::string line_where(const std::string& source, size_t line) {
  return source + ":" + std::to_string(line);
}

// pandas' names: an empty header cell is "Unnamed: i"; duplicate names are an error.
std::vector<std::string> header_names(const Record& header, const std::string& source) {
  std::vector<std::string> names;
  for (size_t i = 0; i < header.fields.size(); ++i) {
    std::string name = header.fields[i].empty() ? "Unnamed: " + std::to_string(i) : header.fields[i];
    for (const std::string& seen : names) {
      check(seen != name, line_where(source, header.line), "duplicate column '", name, "'");
    }
    names.push_back(std::move(name));
  }
  return names;
}

Table parse_delimited(std::string_view text, std::string source, const TableOptions& options,
                      char delimiter, bool quoting) {
  check_table_text(text, source);
  std::vector<Record> records = RecordReader(text, source, delimiter, quoting).read_all();
  Table table;
  table.source = std::move(source);
  size_t first = 0;
  std::string expected;  // what a row's field count is compared with, for messages
  if (options.header) {
    check(!records.empty(), table.source, "empty file: no header line");
    table.columns = header_names(records[0], table.source);
    if (!options.column_names.empty()) {
      check(options.column_names.size() == table.columns.size(), line_where(table.source, 1),
            options.column_names.size(), " column names given, the header has ",
            table.columns.size());
      table.columns = options.column_names;
    }
    expected = "header has " + std::to_string(table.columns.size());
    first = 1;
  } else if (!options.column_names.empty()) {
    table.columns = options.column_names;
    expected = std::to_string(table.columns.size()) + " column names given";
  } else if (!records.empty()) {
    for (size_t i = 0; i < records[0].fields.size(); ++i) table.columns.push_back(std::to_string(i));
    expected = "first row has " + std::to_string(table.columns.size());
  }
  for (size_t r = first; r < records.size(); ++r) {
    Record& record = records[r];
    check(record.fields.size() == table.columns.size(), line_where(table.source, record.line),
          "row has ", record.fields.size(), " field", record.fields.size() == 1 ? "" : "s", ", ",
          expected);
    std::vector<Cell> cells;
    cells.reserve(record.fields.size());
    for (std::string& field : record.fields) cells.push_back({CellType::raw, std::move(field)});
    table.rows.push_back(std::move(cells));
    table.lines.push_back(record.line);
  }
  return table;
}

}  // namespace

Table parse_csv(std::string_view text, std::string source, const TableOptions& options) {
  return parse_delimited(text, std::move(source), options, ',', true);
}

Table parse_tsv(std::string_view text, std::string source, const TableOptions& options) {
  return parse_delimited(text, std::move(source), options, '\t', false);
}

}  // namespace kiln
