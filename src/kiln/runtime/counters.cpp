// The counters as one line of text.
#include "kiln/runtime/counters.h"

#include <array>
#include <cstdio>

namespace kiln {

std::string format_bytes(int64_t bytes) {
  constexpr std::array<const char*, 4> kUnits = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + "B";
  auto value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%s", value, kUnits[unit]);
  return text;
}

std::string format_counters(const RuntimeCounters& counters) {
  char times[96];
  std::snprintf(times, sizeof times, "compile_ms=%.1f", counters.compile_ms);
  char execute[48];
  std::snprintf(execute, sizeof execute, "execute_ms=%.1f", counters.execute_ms);
  std::string disk;
  if (counters.disk_cache_hits + counters.disk_cache_misses > 0) {
    disk = " disk_cache_hits=" + std::to_string(counters.disk_cache_hits) +
           " disk_cache_misses=" + std::to_string(counters.disk_cache_misses);
  }
  return "compiles=" + std::to_string(counters.compiles) +
         " cache_hits=" + std::to_string(counters.cache_hits) + disk + " " + times +
         " runs=" + std::to_string(counters.runs) + " " + execute +
         " host_to_device=" + format_bytes(counters.host_to_device_bytes) +
         " device_to_host=" + format_bytes(counters.device_to_host_bytes) +
         " arena_bytes=" + format_bytes(counters.arena_bytes) +
         " kernels=" + std::to_string(counters.kernels) +
         " compiled_loops=" + std::to_string(counters.compiled_loops);
}

}  // namespace kiln
