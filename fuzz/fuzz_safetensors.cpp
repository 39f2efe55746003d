// libFuzzer target: safetensors headers and tensor views from arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "kiln/io/safetensors.h"
#include "kiln/ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto bytes = std::as_bytes(std::span<const uint8_t>(data, size));
    kiln::SafetensorsContents contents = kiln::safetensors_parse(bytes, "fuzz.safetensors");
    for (const kiln::SafetensorsView& view : contents.tensors) {
      try {
        kiln::safetensors_to_tensor(view, "fuzz.safetensors");
      } catch (const kiln::Error&) {  // dtypes Kiln lacks are a clean error
      }
    }
  } catch (const kiln::Error&) {
  }
  return 0;
}
