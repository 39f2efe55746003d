// The CPU backend's arena: one block of a run's buffers, on transparent huge pages where the
// kernel gives them (madvise, the mode Debian enables). The step's kernels stream through
// buffers of many MiB (activations, their gradients, GEMM results), and 4 KiB pages cost them a
// TLB miss every 64 lines. The block starts on a huge page; its tail past the last whole one
// stays in small pages, so the resident set grows by nothing.
//
// The price is the first run's page faults: where free memory is fragmented the kernel compacts
// it for each huge page (BERT-base --bf16's 1.1 GB arena: first step 1.8 -> 6.5 s on the
// development VM, then 5% faster steps). Host tensors (weights, AdamW's moments) keep small
// pages: advised too, they cost 15 s more there and no measurable step time.
#pragma once

#include <cstddef>
#include <memory>

namespace kiln::cpu {

struct ArenaFree {
  size_t bytes = 0;
  void operator()(std::byte* data) const;
};
using ArenaBytes = std::unique_ptr<std::byte[], ArenaFree>;

// `bytes` bytes (at least one), uninitialised, 64-byte aligned; from 2 MiB on, as above.
ArenaBytes allocate_arena(size_t bytes);

}  // namespace kiln::cpu
