// Internal: the one AMX tile configuration Kiln's tile code loads (amx_block_products.cpp, the
// throughput kernel of unit_throughput.cpp).
#pragma once

#include <cstdint>

namespace kiln::cpu {

// LDTILECFG's 64 bytes: palette 1, every tile 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};

  TileConfig() {
    for (int t = 0; t < 8; ++t) {
      bytes_per_row[t] = 64;
      rows[t] = 16;
    }
  }
};
static_assert(sizeof(TileConfig) == 64);

}  // namespace kiln::cpu
