#include "kiln/runtime/heap_pages.h"

#if __has_include(<malloc.h>)
#include <malloc.h>  // defines __GLIBC__ on glibc
#endif

namespace kiln {

void return_free_heap_pages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace kiln
