#include "kiln/runtime/heap_pages.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kiln {

void return_free_heap_pages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace kiln
