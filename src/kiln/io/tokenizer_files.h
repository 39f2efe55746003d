// Tokenizers from and to Hugging Face's files: vocab.txt (+ tokenizer_config.json) or
// tokenizer.json. Saving writes all of them, so transformers.AutoTokenizer loads the folder.
#pragma once

#include <string>
#include <string_view>

#include "kiln/io/tokenizer.h"

namespace kiln {

// Parsers: pure functions of their texts (the fuzzing entry points); errors read "[where] ..."
// naming the file, and the line or key. An empty `config_json` means no tokenizer_config.json.
// vocab.txt: BertTokenizer's options and special tokens come from tokenizer_config.json.
Tokenizer tokenizer_vocab_parse(std::string_view vocab_text, std::string_view vocab_where,
                                std::string_view config_json = {},
                                std::string_view config_where = {});
// tokenizer.json (normalizer, pre-tokenizer, WordPiece or BPE model, post-processor, decoder,
// added tokens, truncation, padding); tokenizer_config.json adds model_max_length, the sides and
// token names (and for BPE add_prefix_space / trim_offsets, as GPT-2's and RoBERTa's classes).
Tokenizer tokenizer_json_parse(std::string_view json_text, std::string_view where,
                               std::string_view config_json = {},
                               std::string_view config_where = {});

// A folder: tokenizer.json when present, else vocab.txt; tokenizer_config.json when present.
Tokenizer tokenizer_load(const std::string& folder);
Tokenizer tokenizer_load_vocab(const std::string& vocab_path, const std::string& config_path = "");
Tokenizer tokenizer_load_json(const std::string& path, const std::string& config_path = "");

// The texts of the files, as transformers writes them.
std::string tokenizer_to_json(const Tokenizer& tokenizer);
std::string tokenizer_config_to_json(const Tokenizer& tokenizer);
std::string tokenizer_special_tokens_map_to_json(const Tokenizer& tokenizer);
std::string tokenizer_vocab_to_text(const Tokenizer& tokenizer);
// Writes tokenizer_config.json, special_tokens_map.json, tokenizer.json and (WordPiece only)
// vocab.txt into `folder` (created if missing), each file atomically.
void tokenizer_save(const Tokenizer& tokenizer, const std::string& folder);

}  // namespace kiln
