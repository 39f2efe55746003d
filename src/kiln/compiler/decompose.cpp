// Composites the backend runs without a kernel of its own become their decompositions (attention
// stays under bf16 too: the bf16 pass casts its operands, as it casts a dot_general's).
#include "kiln/compiler/passes.h"

#include "kiln/ir/op_registry.h"

namespace kiln {

Module decompose_composites(const Module& module, const BackendCapabilities& capabilities,
                            const CompileOptions& options) {
  return rewrite_module(module, [&](Graph&, const Node& node, int32_t,
                                    const std::vector<Value>& operands) {
    const OpInfo& info = op_info(node.op);
    bool decompose = info.category == OpCategory::composite &&
                     (options.decompose_composites || !capabilities.runs_composite ||
                      !capabilities.runs_composite(node.op));
    return decompose ? info.decompose(node, operands) : Value();
  });
}

}  // namespace kiln
