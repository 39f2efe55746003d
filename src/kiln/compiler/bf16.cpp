// bf16 mixed precision: each f32 dot_general becomes a dot_general of bf16 casts of its operands
// with an f32 result, i.e. bf16 products accumulated in f32 (what oneDNN's bf16 matmul and
// torch.autocast do). A value read by several products gets one cast per product here; cse then
// keeps one (a weight's cast is shared by the forward product and the backward one). Nothing
// else changes precision: parameters, optimizer state, softmax, layer norm and the loss stay f32.
#include "kiln/compiler/passes.h"
#include "kiln/ir/ops.h"

namespace kiln {

Module use_bf16_matmuls(const Module& module) {
  return rewrite_module(module, [](Graph&, const Node& node, int32_t,
                                   const std::vector<Value>& operands) {
    if (node.op != OpKind::dot_general || node.dtype != DType::f32 ||
        operands[0].dtype() != DType::f32) {
      return Value();
    }
    return dot_general(cast(operands[0], DType::bf16), cast(operands[1], DType::bf16),
                       node.attr<DotAttrs>(), DType::f32);
  });
}

}  // namespace kiln
