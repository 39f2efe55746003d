// Text lines, their run_mlm.py split, and examples by line or by concatenated blocks.
#include "kiln/io/lm_dataset.h"

#include <cmath>

#include "kiln/io/mapped_file.h"
#include "kiln/io/python_text.h"
#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

TextLines slice(const TextLines& text, size_t begin, size_t end) {
  TextLines out;
  out.source = text.source;
  out.lines.assign(text.lines.begin() + static_cast<std::ptrdiff_t>(begin),
                   text.lines.begin() + static_cast<std::ptrdiff_t>(end));
  out.line_numbers.assign(text.line_numbers.begin() + static_cast<std::ptrdiff_t>(begin),
                          text.line_numbers.begin() + static_cast<std::ptrdiff_t>(end));
  out.last_line_ended = end < text.lines.size() || text.last_line_ended;
  return out;
}

// `line.isspace()` or empty: run_mlm.py's line_by_line drops such lines.
bool blank(const std::string& line, const std::string& where) {
  for (char32_t c : utf8_decode(line, where)) {
    if (!python_is_space(c)) return false;
  }
  return true;
}

Encoding take(const Encoding& all, size_t start, size_t count) {
  Encoding block;
  for (size_t t = start; t < start + count; ++t) {
    block.push(all.ids[t], all.type_ids[t], all.offsets[t], all.word_ids[t], all.sequence_ids[t],
               all.special_tokens_mask[t]);
  }
  return block;
}

void append(Encoding& all, const Encoding& line) {
  for (size_t t = 0; t < line.size(); ++t) {
    all.push(line.ids[t], line.type_ids[t], line.offsets[t], line.word_ids[t],
             line.sequence_ids[t], line.special_tokens_mask[t]);
  }
}

}  // namespace

void LmDataset::keep_first(size_t count) {
  if (count >= examples.size()) return;
  examples.resize(count);
  lines.resize(count);
}

TextLines read_text_lines(const std::string& path) {
  MappedFile file(path);
  std::span<const std::byte> bytes = file.bytes();
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  TextLines out;
  out.source = path;
  size_t number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    out.last_line_ended = end < text.size();
    start = end + 1;
    ++number;
    utf8_decode(line, path + ":" + std::to_string(number));
    out.lines.emplace_back(line);
    out.line_numbers.push_back(number);
  }
  return out;
}

std::pair<TextLines, TextLines> split_text_lines(const TextLines& text, int64_t percentage) {
  check(percentage >= 0 && percentage <= 100, "--validation_split_percentage", percentage,
        " is not a percentage");
  const auto n = static_cast<double>(text.lines.size());
  const auto held_out =
      static_cast<size_t>(std::nearbyint(n * static_cast<double>(percentage) / 100.0));
  return {slice(text, 0, held_out), slice(text, held_out, text.lines.size())};
}

LmDataset lm_dataset(const Tokenizer& tokenizer, const TextLines& text,
                     const LmDatasetOptions& options) {
  check(options.max_seq_length > 0 && options.group_batch_lines > 0, "lm dataset",
        "max_seq_length and the group size must be positive");
  LmDataset dataset;
  dataset.source = text.source;
  EncodeOptions encode;
  if (options.line_by_line) {
    encode.truncation = Truncation::longest_first;
    encode.max_length = options.max_seq_length;
    for (size_t i = 0; i < text.lines.size(); ++i) {
      const std::string where = text.source + ":" + std::to_string(text.line_numbers[i]);
      if (blank(text.lines[i], where)) continue;
      dataset.examples.push_back(tokenizer.encode(text.lines[i], encode));
      dataset.lines.push_back(text.line_numbers[i]);
    }
    return dataset;
  }
  const size_t block = options.max_seq_length;
  for (size_t first = 0; first < text.lines.size(); first += options.group_batch_lines) {
    const size_t last = std::min(text.lines.size(), first + options.group_batch_lines);
    Encoding all;
    std::vector<size_t> line_of;  // the line of each concatenated token
    for (size_t i = first; i < last; ++i) {
      const bool line_break =
          options.keep_linebreaks && (i + 1 < text.lines.size() || text.last_line_ended);
      Encoding line = tokenizer.encode(line_break ? text.lines[i] + "\n" : text.lines[i], encode);
      append(all, line);
      line_of.insert(line_of.end(), line.size(), text.line_numbers[i]);
    }
    for (size_t start = 0; start + block <= all.size(); start += block) {
      dataset.examples.push_back(take(all, start, block));
      dataset.lines.push_back(line_of[start]);
    }
  }
  return dataset;
}

}  // namespace kiln
