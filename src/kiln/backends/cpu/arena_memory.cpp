// The arena's block: huge-page-aligned from 2 MiB on, its whole huge pages advised as such.
#include "kiln/backends/cpu/arena_memory.h"

#include <algorithm>
#include <new>

#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#endif

namespace kiln::cpu {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

std::align_val_t alignment_for(size_t bytes) {
  return std::align_val_t{bytes >= kHugePage ? kHugePage : 64};
}

}  // namespace

void ArenaFree::operator()(std::byte* data) const {
  ::operator delete[](data, alignment_for(bytes));
}

ArenaBytes allocate_arena(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  auto* data = static_cast<std::byte*>(::operator new[](bytes, alignment_for(bytes)));
#if defined(MADV_HUGEPAGE)
  // Advice only: where the kernel has no transparent huge pages, the block keeps small pages.
  if (bytes >= kHugePage) madvise(data, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return ArenaBytes(data, {bytes});
}

}  // namespace kiln::cpu
