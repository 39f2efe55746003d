// Host memory: huge-page-aligned blocks with their whole huge pages advised as such.
#include "kiln/ir/host_memory.h"

#include <algorithm>
#include <new>

#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#endif

namespace kiln {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kSmallAlignment = 64;

std::align_val_t alignment_for(size_t bytes) {
  return std::align_val_t{bytes >= kHugePage ? kHugePage : kSmallAlignment};
}

}  // namespace

std::byte* allocate_host(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  auto* data = static_cast<std::byte*>(::operator new[](bytes, alignment_for(bytes)));
#if defined(MADV_HUGEPAGE)
  // Advice only: where the kernel has no transparent huge pages, the block keeps small pages.
  if (bytes >= kHugePage) madvise(data, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return data;
}

void free_host(std::byte* data, size_t bytes) {
  ::operator delete[](data, alignment_for(std::max<size_t>(bytes, 1)));
}

}  // namespace kiln
