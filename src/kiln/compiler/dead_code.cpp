// Dead-code elimination: a copy of the live part.
#include "kiln/compiler/passes.h"

namespace kiln {

Module eliminate_dead_code(const Module& module) {
  return copy_module(*module.graph, module.output_values(), true);
}

}  // namespace kiln
