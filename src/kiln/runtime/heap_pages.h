// Internal: hands the heap's free pages back to the system.
#pragma once

namespace kiln {

// Called once the host copies of a run's initial weights are uploaded and freed: glibc keeps
// freed memory below the heap's top resident (BERT-base: 358 of its 2,906 MiB peak in `kiln
// bench`), where this returns it (malloc_trim). A no-op elsewhere.
void return_free_heap_pages();

}  // namespace kiln
