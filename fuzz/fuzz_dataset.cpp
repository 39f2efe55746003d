// libFuzzer target: CSV, TSV and JSONL classification files (first byte picks the format and
// whether there is a header), then the dataset built from the table.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/io/dataset.h"
#include "kiln/ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  kiln::TableOptions options;
  options.header = (data[0] & 4) == 0;
  try {
    kiln::Table table = (data[0] & 3) == 0   ? kiln::parse_csv(text, "fuzz.csv", options)
                        : (data[0] & 3) == 1 ? kiln::parse_tsv(text, "fuzz.tsv", options)
                                             : kiln::parse_jsonl(text, "fuzz.jsonl");
    kiln::classification_dataset(table);
  } catch (const kiln::Error&) {
  }
  return 0;
}
