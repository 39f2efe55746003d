// Extractive question-answering data in SQuAD's formats, as run_qa.py's `datasets` loading sees
// it: the official nested JSON (data -> paragraphs -> qas), and Hugging Face's flat layout (one
// record per question with answers {"text": [...], "answer_start": [...]}) either as
// {"data": [records]} JSON or as JSON Lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct SquadAnswer {
  std::string text;
  size_t answer_start = 0;  // in characters (code points) of the context: a Python str index
};

struct SquadExample {
  std::string id;
  std::string title;
  std::string context;
  std::string question;
  std::vector<SquadAnswer> answers;  // empty: unanswerable (SQuAD v2.0)
  std::string where;                 // "file:line" (JSON Lines) or "file" with the question id
};

struct SquadDataset {
  std::string source;
  std::string version;  // the file's "version" ("1.1", "v2.0", "2.0"); empty when it has none
  std::vector<SquadExample> examples;

  size_t size() const { return examples.size(); }
  // Whether any question has no answer (what --version_2_with_negative is for).
  bool has_unanswerable() const;
};

// Parses a dataset; `jsonl` picks JSON Lines, else one JSON document (nested or flat, told apart
// by the first entry of "data"). Errors name the source and the question id (or its path such as
// data[2].paragraphs[0].qas[4], or the line): missing or mistyped fields, an empty id, a
// duplicate id, an answer whose start and length run past the end of its context, flat answer
// lists of different lengths.
SquadDataset parse_squad(std::string_view text, std::string source, bool jsonl);

// Reads `path` (memory-mapped); ".jsonl" files are JSON Lines. A file without questions is an
// Error.
SquadDataset load_squad(const std::string& path);

// The first `count` questions (all when count is 0 or more than there are), as run_qa.py's
// --max_*_samples select them.
SquadDataset squad_head(const SquadDataset& dataset, size_t count);

}  // namespace kiln
