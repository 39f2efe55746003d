// Host memory for tensors and the CPU backend's arena. Blocks of at least a huge page (2 MiB)
// start on one, and their whole huge pages are offered to the kernel's transparent huge pages
// (madvise, the mode Debian enables): the step's kernels stream through buffers of many MiB
// (activations, gradients, AdamW's moments), and 4 KiB pages cost them a TLB miss every 64
// lines. A block's tail past its last whole huge page stays in small pages, so the resident set
// grows by nothing. Smaller blocks are 64-byte aligned.
#pragma once

#include <cstddef>
#include <memory>

namespace kiln {

// `bytes` bytes (at least one), uninitialised; release with free_host(data, bytes).
std::byte* allocate_host(size_t bytes);
void free_host(std::byte* data, size_t bytes);

// Owns a block from allocate_host.
struct HostFree {
  size_t bytes = 0;
  void operator()(std::byte* data) const { free_host(data, bytes); }
};
using HostBytes = std::unique_ptr<std::byte[], HostFree>;

inline HostBytes make_host_bytes(size_t bytes) { return HostBytes(allocate_host(bytes), {bytes}); }

}  // namespace kiln
