// libFuzzer target: SQuAD files (first byte: bit 0 picks JSON Lines over one JSON document), then
// run_qa.py's features of the questions read (bit 1 picks the window sizes) with a small
// vocabulary, which walk the offsets of every answer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/io/squad_features.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"

namespace {

const kiln::Tokenizer& tokenizer() {
  static const kiln::Tokenizer instance = kiln::tokenizer_vocab_parse(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\na\nof\nin\nnormandy\nfrance\nwhat\nwho\n"
      "is\nwas\n##s\n##ed\n.\n,\n?\n1\n9\n##0\n",
      "fuzz vocab");
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool jsonl = (data[0] & 1) != 0;
  try {
    kiln::SquadDataset dataset = kiln::parse_squad(text, jsonl ? "fuzz.jsonl" : "fuzz.json", jsonl);
    kiln::QaFeatureOptions options;
    options.max_seq_length = (data[0] & 2) != 0 ? 12 : 40;
    options.doc_stride = (data[0] & 2) != 0 ? 3 : 10;
    kiln::squad_features(tokenizer(), dataset, options);
  } catch (const kiln::Error&) {
  }
  return 0;
}
