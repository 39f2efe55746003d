// Shared by the trainer_* and cli_* tests: scratch folders, a small vocabulary, generated
// sentiment files laid out as the UCI TSV (label, source, text; no header), a tiny BERT config,
// and Trainers built on them.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/philox.h"
#include "kiln/models/bert.h"
#include "kiln/train/trainer.h"
#include "support/testing.h"

namespace kiln::testing {

namespace fs = std::filesystem;

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline const std::vector<std::string> kPositive = {"good", "great", "fine", "nice", "love"};
inline const std::vector<std::string> kNegative = {"bad", "awful", "poor", "sad", "hate"};
inline const std::vector<std::string> kNeutral = {"the", "a",    "movie", "food",    "was",
                                                  "is",  "very", "plot",  "service", "it"};

// vocab.txt: BERT's special tokens, then the words above.
inline fs::path write_vocab(const fs::path& dir, bool with_unk = true) {
  std::string text = "[PAD]\n" + std::string(with_unk ? "[UNK]\n" : "") + "[CLS]\n[SEP]\n[MASK]\n";
  for (const auto* words : {&kPositive, &kNegative, &kNeutral}) {
    for (const std::string& word : *words) text += word + "\n";
  }
  fs::path path = dir / "vocab.txt";
  write_text(path, text);
  return path;
}

// `count` rows "label\tsource\ttext" of 3 to 9 words: label 1 when the sentence has more
// positive than negative words (ties broken by the first sentiment word). `labels` names the
// two classes.
inline fs::path write_sentiment_tsv(const fs::path& path, int64_t count, int64_t seed,
                                    const std::vector<std::string>& labels = {"0", "1"}) {
  std::string text;
  for (int64_t i = 0; i < count; ++i) {
    auto draw = [&](int64_t k) { return random_bits_at(seed, i, 0, k); };
    int64_t length = 3 + draw(0) % 7, score = 0;
    std::string sentence;
    for (int64_t w = 0; w < length; ++w) {
      uint32_t kind = draw(1 + 2 * w) % 3, pick = draw(2 + 2 * w);
      const std::vector<std::string>& words = kind == 0   ? kPositive
                                              : kind == 1 ? kNegative
                                                          : kNeutral;
      if (score == 0 && kind < 2) score = kind == 0 ? 1 : -1;  // the tie-break
      score += kind == 0 ? 2 : kind == 1 ? -2 : 0;
      sentence += (w ? " " : "") + words[pick % words.size()];
    }
    text += labels[score > 0 ? 1 : 0] + "\tsource\t" + sentence + "\n";
  }
  write_text(path, text);
  return path;
}

inline ClassificationDataset load_sentiment(const fs::path& path,
                                            const std::vector<std::string>& label_names = {}) {
  ClassificationOptions options;
  options.table.header = false;
  options.table.column_names = {"label", "source", "text"};
  options.label_names = label_names;
  return load_classification_dataset(path.string(), options);
}

// Generated train and eval splits in `dir` (train.tsv, seed 5; eval.tsv, seed 6).
struct SentimentSplits {
  ClassificationDataset train, eval;
};
inline SentimentSplits sentiment_splits(const fs::path& dir, int64_t train_rows,
                                        int64_t eval_rows) {
  ClassificationDataset train =
      load_sentiment(write_sentiment_tsv(dir / "train.tsv", train_rows, 5));
  ClassificationDataset eval =
      load_sentiment(write_sentiment_tsv(dir / "eval.tsv", eval_rows, 6), train.label_names);
  return {std::move(train), std::move(eval)};
}

// One layer, hidden 8, two heads; dropout as given; two labels "0" and "1".
inline BertConfig tiny_config(int64_t vocab_size, double dropout = 0.0) {
  BertConfig config;
  config.vocab_size = vocab_size;
  config.hidden_size = 8;
  config.num_hidden_layers = 1;
  config.num_attention_heads = 2;
  config.intermediate_size = 16;
  config.max_position_embeddings = 32;
  config.hidden_dropout_prob = dropout;
  config.attention_probs_dropout_prob = dropout;
  config.id2label = {"0", "1"};
  return config;
}

inline TensorMap initial_weights(const BertConfig& config, int64_t seed) {
  Graph graph;
  BertBuildOptions options;
  options.seq_len = 1;
  options.with_labels = false;
  BertClassifier model = bert_for_sequence_classification(graph, config, options);
  model.params.initialize(seed);
  return model.params.state_dict();
}

// Small batches, a high learning rate, no console output or reporters; post-init done.
inline TrainingArguments tiny_args(const fs::path& output_dir) {
  TrainingArguments args;
  args.output_dir = output_dir.string();
  args.per_device_train_batch_size = 4;
  args.per_device_eval_batch_size = 8;
  args.learning_rate = 1e-2;
  args.max_seq_length = 16;
  args.logging_steps = 1;
  args.save_strategy = SaveStrategy::no;
  args.report_to = {"none"};
  args.disable_tqdm = true;
  return args;
}

// A Trainer on the tiny model with `args` (post-init applied here); messages go to `log`.
struct TinyRun {
  fs::path vocab;
  BertConfig config;
  std::unique_ptr<Backend> backend = make_reference_backend();
  std::ostringstream log;
  std::unique_ptr<Trainer> trainer;

  TinyRun(const fs::path& dir, TrainingArguments args, double dropout = 0.0) {
    fs::create_directories(dir);
    vocab = write_vocab(dir);
    Tokenizer tokenizer = tokenizer_load_vocab(vocab.string());
    config = tiny_config(tokenizer.vocab_size(), dropout);
    training_arguments_post_init(args);
    trainer = std::make_unique<Trainer>(args, config, initial_weights(config, 7), tokenizer,
                                        *backend, log);
  }
};

// The tensors of a safetensors file by name.
inline TensorMap read_weights(const fs::path& file) {
  SafetensorsFile weights(file.string());
  TensorMap out;
  for (const std::string& name : weights.names()) out.emplace(name, weights.to_tensor(name));
  return out;
}

// Bit-for-bit equality of two weight maps; the first difference as a message.
inline std::string weights_difference(const TensorMap& a, const TensorMap& b) {
  if (a.size() != b.size()) return "different parameter counts";
  for (const auto& [name, tensor] : a) {
    auto other = b.find(name);
    if (other == b.end()) return "no '" + name + "'";
    if (tensor.nbytes() != other->second.nbytes() ||
        std::memcmp(tensor.data(), other->second.data(), tensor.nbytes()) != 0) {
      return "'" + name + "' differs";
    }
  }
  return "";
}

}  // namespace kiln::testing
