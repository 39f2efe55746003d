// Token classification data as run_ner.py reads and tokenizes it: JSON lines (or .json) rows of
// a word list and a tag list, the label list of get_label_list, and tokenize_and_align_labels'
// features (each word's label on its first token, -100 elsewhere).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/io/dataset_table.h"
#include "kiln/io/tokenizer.h"

namespace kiln {

// run_ner.py's --text_column_name and --label_column_name; empty: "tokens" when the file has it,
// else its first column, and "ner_tags" when the file has it, else its second column.
struct NerColumns {
  std::string text;
  std::string label;
};

struct NerDataset {
  std::string source;
  std::vector<std::vector<std::string>> words;
  // One tag per word (a JSON string, or an integer written in decimal); empty without a tag
  // column (prediction data).
  std::vector<std::vector<std::string>> tags;
  bool integer_tags = false;  // the tags were JSON integers
  std::vector<size_t> lines;  // 1-based line of each row

  size_t size() const { return words.size(); }
  bool has_tags() const { return !tags.empty(); }
  std::string where(size_t row) const;
  // The first `count` rows (--max_*_samples, run_ner.py's select(range(count))).
  void keep_first(size_t count);
};

// Errors name the file and line: a row without the word column (or, with `require_tags`, the tag
// column), a cell that is not a list of strings (tags: of strings or of integers), a tag list of
// another length than the words.
NerDataset read_ner_dataset(const std::string& path, const NerColumns& columns, bool require_tags);
// The same from a JSON lines table already read.
NerDataset ner_dataset(const Table& table, const NerColumns& columns, bool require_tags);

// run_ner.py's get_label_list: the sorted distinct tags (integer tags in numeric order).
std::vector<std::string> ner_label_list(const NerDataset& data);

struct NerFeatureOptions {
  size_t max_seq_length = 128;
  // --label_all_tokens: a word's other tokens get its label too, B-X turned into I-X when the
  // label list has I-X (run_ner.py's b_to_i_label); else -100.
  bool label_all_tokens = false;
};

struct NerFeatures {
  std::vector<Encoding> encodings;  // truncated to max_seq_length, special tokens added
  // Per token: the label id, or -100 (special tokens, and a word's other tokens without
  // label_all_tokens). Data without tags gets the ids of its first label at the same places.
  std::vector<std::vector<int32_t>> labels;
};

constexpr int32_t kIgnoredLabel = -100;

// tokenize_and_align_labels over every row; `label_list` gives the label ids (a tag outside it
// is an Error naming the row).
NerFeatures ner_features(const Tokenizer& tokenizer, const NerDataset& data,
                         const std::vector<std::string>& label_list,
                         const NerFeatureOptions& options);

}  // namespace kiln
