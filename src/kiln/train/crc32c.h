// CRC-32C (Castagnoli), as TFRecord files frame each record with it.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln {

// The plain CRC-32C of `bytes` (crc32c("123456789") == 0xE3069283).
uint32_t crc32c(std::string_view bytes);

// TFRecord's masked form: rotate right by 15 and add a constant, so that a CRC stored next to
// the data it covers does not checksum to a trivial value.
uint32_t crc32c_masked(std::string_view bytes);

}  // namespace kiln
