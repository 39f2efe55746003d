// libFuzzer target: vocab.txt and tokenizer.json parsing (first byte picks which), then
// encoding a text with whatever tokenizer parsed.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    kiln::Tokenizer tokenizer = (data[0] & 1)
                                    ? kiln::tokenizer_json_parse(text, "fuzz/tokenizer.json")
                                    : kiln::tokenizer_vocab_parse(text, "fuzz/vocab.txt");
    tokenizer.encode("Hello, world! Ça va? 東京 unaffable");
    tokenizer.encode(text.substr(0, 256));
  } catch (const kiln::Error&) {
  }
  return 0;
}
