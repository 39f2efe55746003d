// Language-modeling text as run_mlm.py and run_clm.py prepare it: the lines of text files (the
// `datasets` text loader), the first validation_split_percentage of them held out, then either
// each non-blank line as one example truncated to max_seq_length (--line_by_line), or every line
// tokenized with its special tokens, concatenated and cut into blocks of exactly max_seq_length
// tokens (group_texts, per map batch of 1,000 lines, whose remainder is dropped).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "kiln/io/tokenizer.h"

namespace kiln {

struct TextLines {
  std::string source;
  std::vector<std::string> lines;      // without their line break ("\n" or "\r\n")
  std::vector<size_t> line_numbers;    // 1-based
  bool last_line_ended = false;        // whether the last line has a line break after it
};

// The lines of a UTF-8 text file (invalid UTF-8 is an Error naming the line). A final line break
// does not start another line.
TextLines read_text_lines(const std::string& path);

// run_mlm.py's split of a train file without a validation file: the first
// round(n * percentage / 100) lines (validation), then the rest (train).
std::pair<TextLines, TextLines> split_text_lines(const TextLines& text, int64_t percentage);

struct LmDatasetOptions {
  size_t max_seq_length = 128;
  bool line_by_line = false;
  size_t group_batch_lines = 1000;  // `datasets` map's batch size, over which blocks are formed
  // run_clm.py's keep_linebreaks (the text loader's option; run_mlm.py leaves it false): each
  // line is tokenized with its "\n" ("\r\n" read as "\n", as Python's text mode does).
  bool keep_linebreaks = false;
};

struct LmDataset {
  std::string source;
  // ids, type ids, attention mask and special_tokens_mask of each example (block or line).
  std::vector<Encoding> examples;
  std::vector<size_t> lines;  // the line each example starts on

  size_t size() const { return examples.size(); }
  // Keeps the first `count` examples (--max_train_samples, ...), all when there are fewer.
  void keep_first(size_t count);
  std::string where(size_t i) const { return source + ":" + std::to_string(lines.at(i)); }
};

LmDataset lm_dataset(const Tokenizer& tokenizer, const TextLines& text,
                     const LmDatasetOptions& options);

}  // namespace kiln
