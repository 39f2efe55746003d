// bf16 mixed precision: each f32 dot_general becomes a dot_general of bf16 casts of its operands
// with an f32 result, i.e. bf16 products accumulated in f32 (what oneDNN's bf16 matmul and
// torch.autocast do); attention and its gradient, whose kernels hold their products inside, get
// the same treatment of q, k, v (and the cotangent). A value read by several products gets one
// cast per product here; cse then keeps one (a weight's cast is shared by the forward product and
// the backward one). Nothing else changes precision: parameters, optimizer state, softmax, layer
// norm and the loss stay f32.
//
// The choice between bf16 and f32 products is the backend's (BackendCapabilities::bf16_products),
// made here, in the one pass that applies the policy: a backend without fast bf16 products gets
// f32 products of operands rounded to bf16 (cast to bf16 and back), the same values, and needs no
// path of its own; the reference and PJRT backends keep bf16 products. Attention keeps bf16
// operands either way: its kernels widen them to f32 themselves and round the probabilities to
// bf16 before their products, which f32 operands would not tell them to do.
#include "kiln/compiler/passes.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

Value bf16_attention(const Node& node, const std::vector<Value>& operands) {
  auto half = [](Value x) { return cast(x, DType::bf16); };
  const auto& attrs = node.attr<AttentionAttrs>();
  AttentionDropout dropout;
  if (attrs.dropout_rate > 0.0) {
    dropout = {operands[operands.size() - 2], operands.back(), attrs.dropout_rate, attrs.stream};
  }
  Value q = half(operands[0]), k = half(operands[1]), v = half(operands[2]);
  if (node.op == OpKind::attention) {
    return attention(q, k, v, operands[3], attrs.scale, dropout, DType::f32, attrs.layout);
  }
  return attention_grad(q, k, v, operands[3], operands[4], half(operands[5]), attrs.scale,
                        dropout, DType::f32, attrs.layout);
}

}  // namespace

Module use_bf16_matmuls(const Module& module, bool bf16_products) {
  auto rounded = [bf16_products](const Value& operand) {
    Value bf16 = cast(operand, DType::bf16);
    return bf16_products ? bf16 : cast(bf16, DType::f32);
  };
  return rewrite_module(module, [&](Graph&, const Node& node, int32_t,
                                    const std::vector<Value>& operands) {
    bool attention_op = node.op == OpKind::attention || node.op == OpKind::attention_grad;
    if ((node.op != OpKind::dot_general && !attention_op) || node.dtype != DType::f32 ||
        operands[0].dtype() != DType::f32) {
      return Value();
    }
    if (attention_op) return bf16_attention(node, operands);
    return dot_general(rounded(operands[0]), rounded(operands[1]), node.attr<DotAttrs>(),
                       DType::f32);
  });
}

}  // namespace kiln
