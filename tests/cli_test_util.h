// Shared by the cli_* tests: runs the built `kiln` binary (KILN_BINARY, set by CMake) and
// writes the files a run needs: a vocabulary, a tiny config.json and generated data.
#pragma once

#include <sstream>
#include <string>

#include "shell_test_util.h"
#include "trainer_test_util.h"

namespace kiln::testing {

inline CommandResult run_kiln(const std::string& arguments) {
  return run_command(std::string(KILN_BINARY) + " " + arguments);
}

// vocab.txt and config.json (the tiny config sized to the vocabulary, with `dropout`) in `dir`;
// returns the flags that start a model from them.
inline std::string write_tiny_model_files(const fs::path& dir, double dropout = 0.0) {
  fs::create_directories(dir);
  fs::path vocab = write_vocab(dir);
  BertConfig config = tiny_config(tokenizer_load_vocab(vocab.string()).vocab_size(), dropout);
  bert_config_write((dir / "config.json").string(), config);
  return "--config_name " + (dir / "config.json").string() + " --tokenizer_name " + vocab.string();
}

// A JSON file a run wrote (eval_results.json, predictions.json, ...).
inline nlohmann::json read_json(const fs::path& path) {
  return nlohmann::json::parse(read_text(path));
}

// The flags of a small, quiet run on headerless TSV files laid out as the UCI data.
inline std::string quick_run_flags(const fs::path& output_dir) {
  return "--output_dir " + output_dir.string() +
         " --no_header --column_names label,source,text --max_seq_length 16"
         " --per_device_train_batch_size 8 --learning_rate 1e-2 --disable_tqdm --seed 3";
}

// `lines` lines of sentiment words (the texts of a generated sentiment file), as corpus.txt.
inline fs::path write_text_corpus(const fs::path& dir, int64_t lines = 40) {
  fs::path tsv = write_sentiment_tsv(dir / "corpus.tsv", lines, 5);
  std::istringstream rows(read_text(tsv));
  std::string text;
  for (std::string row; std::getline(rows, row);) text += row.substr(row.rfind('\t') + 1) + "\n";
  write_text(dir / "corpus.txt", text);
  return dir / "corpus.txt";
}

// Flat SQuAD JSON Lines: questions about sentences of the tiny vocabulary, every third one
// unanswerable.
inline fs::path write_questions(const fs::path& dir) {
  std::string text;
  for (int i = 0; i < 12; ++i) {
    std::string context = "the movie was good and the food was " +
                          std::string(i % 2 ? "bad" : "great") + " but a poor movie";
    std::string answer = i % 2 ? "bad" : "great";
    size_t start = context.find(" was " + answer) + 5;
    bool unanswerable = i % 3 == 2;
    text += "{\"id\": \"q" + std::to_string(i) + "\", \"context\": \"" + context +
            "\", \"question\": \"was the food good\", \"answers\": {\"text\": [" +
            (unanswerable ? "" : "\"" + answer + "\"") + "], \"answer_start\": [" +
            (unanswerable ? "" : std::to_string(start)) + "]}}\n";
  }
  write_text(dir / "questions.jsonl", text);
  return dir / "questions.jsonl";
}

}  // namespace kiln::testing
