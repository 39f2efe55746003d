// libFuzzer target: run_ner.py's JSON lines of word and tag lists (first byte: bit 0 makes the
// tags required, bit 1 labels every sub-token), then the label list and tokenize_and_align_labels'
// features with a small vocabulary.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/io/ner_dataset.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"

namespace {

const kiln::Tokenizer& tokenizer() {
  static const kiln::Tokenizer instance = kiln::tokenizer_vocab_parse(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nanne\nelliot\nbath\nlondon\nthe\nof\nin\n##s\n.\n,\n",
      "fuzz vocab");
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    kiln::NerDataset dataset =
        kiln::ner_dataset(kiln::parse_jsonl(text, "fuzz.jsonl"), {}, (data[0] & 1) != 0);
    std::vector<std::string> labels = kiln::ner_label_list(dataset);
    if (labels.empty()) labels = {"O"};
    kiln::NerFeatureOptions options;
    options.max_seq_length = 12;
    options.label_all_tokens = (data[0] & 2) != 0;
    kiln::ner_features(tokenizer(), dataset, labels, options);
  } catch (const kiln::Error&) {
  }
  return 0;
}
