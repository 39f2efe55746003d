// The runtime's counters: what compiling and running programs has cost so far. Shown at logging
// steps with --debug metrics and in one line at the end of every training run.
#pragma once

#include <cstdint>
#include <string>

namespace kiln {

struct RuntimeCounters {
  int64_t compiles = 0;    // programs compiled by the backend
  int64_t cache_hits = 0;  // compile requests answered by an already compiled program
  // Programs the compile cache on disk had (loaded, not compiled) or lacked (then compiled).
  int64_t disk_cache_hits = 0;
  int64_t disk_cache_misses = 0;
  double compile_ms = 0.0;  // compiling, and loading from the disk cache
  int64_t runs = 0;  // run() calls
  // Time spent in run() calls: on a device that queues runs, the time to queue them.
  double execute_ms = 0.0;
  // Copies between host memory and a device's (none on host backends): uploads, host copies of
  // buffers, and the arguments and results of runs on host tensors.
  int64_t host_to_device_bytes = 0;
  int64_t device_to_host_bytes = 0;
  // Over the live (cached) executables, from Executable::stats().
  int64_t arena_bytes = 0;
  int64_t kernels = 0;  // kernels one run of each executable launches, summed
  int64_t compiled_loops = 0;  // of them, fused loops run as machine code
};

// "compiles=2 cache_hits=38 compile_ms=812.4 runs=40 execute_ms=2301.7 host_to_device=1.21GiB
// device_to_host=8.00KiB arena_bytes=12.00MiB kernels=1234 compiled_loops=40": one line, every
// counter named; the disk cache's ("disk_cache_hits=2 disk_cache_misses=0" after cache_hits) only
// when it was used.
std::string format_counters(const RuntimeCounters& counters);

// 1536 -> "1.50KiB"; below 1 KiB in bytes ("512B").
std::string format_bytes(int64_t bytes);

}  // namespace kiln
