// libFuzzer target: config.json parsing, and write -> parse round trips of what parsed.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/models/bert_config.h"
#include "kiln/ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kiln::BertConfig config;
  try {
    config = kiln::bert_config_parse(text, "fuzz/config.json");
  } catch (const kiln::Error&) {
    return 0;
  }
  // What Kiln accepted it must be able to write and read back.
  kiln::bert_config_parse(kiln::bert_config_to_json(config), "fuzz/rewritten.json");
  return 0;
}
