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

// A tiny model of `model_type` (bert, distilbert, roberta or electra: one layer, hidden 8, no
// dropout) in `dir`: config.json as a user writes it, and its tokenizer, vocab.txt above or for
// RoBERTa the byte-level BPE of tests/fixtures/tokenizer_bpe/roberta. Returns the flags that
// start a model from them.
inline std::string write_tiny_family_model(const fs::path& dir, const std::string& model_type) {
  if (model_type == "bert") return write_tiny_model_files(dir);
  fs::create_directories(dir);
  const bool roberta = model_type == "roberta";
  const std::string tokenizer = roberta
                                    ? KILN_SOURCE_DIR "/tests/fixtures/tokenizer_bpe/roberta"
                                    : write_vocab(dir).string();
  const int32_t vocab_size =
      (roberta ? tokenizer_load(tokenizer) : tokenizer_load_vocab(tokenizer)).vocab_size();
  nlohmann::json config = {{"model_type", model_type}, {"vocab_size", vocab_size}};
  if (model_type == "distilbert") {
    // Weights drawn 5 times wider than transformers' default: at dim 8, DistilBERT's classifier
    // (pre_classifier, ReLU) stays on the chance plateau for 4 epochs from 0.02.
    config.update({{"initializer_range", 0.1}, {"dim", 8}, {"n_heads", 2}, {"n_layers", 1},
                   {"hidden_dim", 16}, {"max_position_embeddings", 32}, {"dropout", 0.0},
                   {"attention_dropout", 0.0}, {"seq_classif_dropout", 0.0},
                   {"qa_dropout", 0.0}});
  } else {
    config.update({{"hidden_size", 8}, {"num_attention_heads", 2}, {"num_hidden_layers", 1},
                   {"intermediate_size", 16}, {"hidden_dropout_prob", 0.0},
                   {"attention_probs_dropout_prob", 0.0}, {"max_position_embeddings", 32}});
  }
  // ELECTRA's embeddings narrower than its hidden states, projected; RoBERTa's positions count
  // from pad_token_id + 1, so 32 tokens need 34 of them.
  if (model_type == "electra") config["embedding_size"] = 6;
  if (roberta) config.update({{"max_position_embeddings", 34}, {"type_vocab_size", 1}});
  write_text(dir / "config.json", config.dump(2));
  return "--config_name " + (dir / "config.json").string() + " --tokenizer_name " + tokenizer;
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
