// Multi-head attention: [B, S, H * D] projections as [B, S, H, D] heads, attention, heads merged.
#include "kiln/nn/attention.h"

#include <limits>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"

namespace kiln {

// [B, S, H*D] -> [B, H, S, D]
Value split_heads(Value x, int64_t heads) {
  int64_t batch = x.dim(0), seq = x.dim(1), head_size = x.dim(2) / heads;
  return transpose(reshape(x, {batch, seq, heads, head_size}), {0, 2, 1, 3});
}

// [B, H, S, D] -> [B, S, H*D]
Value merge_heads(Value x) {
  int64_t batch = x.dim(0), heads = x.dim(1), seq = x.dim(2), head_size = x.dim(3);
  return reshape(transpose(x, {0, 2, 1, 3}), {batch, seq, heads * head_size});
}

namespace {

// torch.finfo(dtype).min: what HF adds to the scores of padding keys.
double lowest(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return std::numeric_limits<float>::lowest();
    case DType::f64:
      return std::numeric_limits<double>::lowest();
    case DType::bf16:
      return -3.3895313892515355e38;
    case DType::f16:
      return -65504.0;
    default:
      fail("attention", "no floating minimum for ", dtype_name(dtype));
  }
}

}  // namespace

Value extended_attention_mask(Value attention_mask, DType dtype) {
  Value keep = cast(attention_mask, dtype);
  Value additive = (1.0 - keep) * lowest(dtype);
  return reshape(additive, {keep.dim(0), 1, 1, keep.dim(1)});
}

Value multi_head_attention(Value q, Value k, Value v, Value mask, int64_t heads, double scale,
                           double dropout_rate, DropoutContext& dropout) {
  for (Value x : {q, k, v}) {
    check(x.rank() == 3 && heads > 0 && x.dim(2) % heads == 0, "multi_head_attention", "input ",
          shape_str(x.shape()), " is no [batch, seq, heads * head_size] for ", heads, " heads");
  }
  // [B, S, H * D] read as [B, S, H, D] (seq_first): no transposes to [B, H, S, D] and back.
  auto heads_of = [heads](Value x) {
    return reshape(x, {x.dim(0), x.dim(1), heads, x.dim(2) / heads});
  };
  Value out = attention(heads_of(q), heads_of(k), heads_of(v), mask, scale,
                        dropout.attention_site(dropout_rate), std::nullopt,
                        AttentionLayout::seq_first);
  return reshape(out, {out.dim(0), out.dim(1), out.dim(2) * out.dim(3)});
}

Value additive_attention_mask(Value allowed, DType dtype) {
  Graph& graph = allowed.graph();
  return select(allowed, full(graph, 0.0, dtype, allowed.shape()),
                full(graph, lowest(dtype), dtype, allowed.shape()));
}

}  // namespace kiln
