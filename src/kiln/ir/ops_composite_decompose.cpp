// Decompositions of the composite ops into core ops only: their gradient (autodiff
// differentiates through them unless a composite has a VJP rule of its own, as softmax does) and
// the oracle for their fused kernels.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "kiln/ir/op_rules.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

bool is_half(DType dtype) { return dtype == DType::bf16 || dtype == DType::f16; }

// Half-precision composites compute in f32 and round once at the end, as fused kernels do.
DType compute_dtype(DType dtype) { return is_half(dtype) ? DType::f32 : dtype; }

Value widen(Value x) { return is_half(x.dtype()) ? cast(x, DType::f32) : x; }

Value narrow(Value y, DType dtype) { return y.dtype() == dtype ? y : cast(y, dtype); }

// x minus its max along `axis`, so that exp never overflows.
Value shift_by_max(Value x, int64_t axis) { return x - reduce_max(x, {axis}, true); }

Value stable_softmax(Value x, int64_t axis) {
  Value e = exp(shift_by_max(x, axis));
  return e / reduce_sum(e, {axis}, true);
}

Value stable_log_softmax(Value x, int64_t axis) {
  Value shifted = shift_by_max(x, axis);
  return shifted - log(reduce_sum(exp(shifted), {axis}, true));
}

Axes leading_axes(int64_t count) {
  Axes axes(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) axes[static_cast<size_t>(i)] = i;
  return axes;
}

// x normalised along its last axis, with the biased variance (as torch).
struct Normalized {
  Value xhat, inv_std;  // (x - mean) / sqrt(var + eps), and 1 / sqrt(var + eps) [..., 1]
};
Normalized normalize(Value x, double eps) {
  Value centered = x - mean(x, {-1}, true);
  Value inv_std = rsqrt(mean(centered * centered, {-1}, true) + eps);
  return {centered * inv_std, inv_std};
}

// x with dropout: keep = bits >= threshold, threshold = min(floor(rate * 2^32), 2^32 - 1); kept
// values times 1 / (1 - rate), as torch scales (its gradient multiplies too). The offset, one
// key or one per leading row, keys the bits as it keys random_bits.
Value drop(Value x, Value seed, Value offset, double rate, uint32_t stream) {
  Value bits = random_bits(seed, offset, x.shape(), stream);
  double threshold = std::min(std::floor(rate * 4294967296.0), 4294967295.0);
  Value keep = ge(bits, scalar_like(bits, threshold));
  return select(keep, x * (1.0 / (1.0 - rate)), scalar_like(x, 0.0));
}

// x between a seq_first attention node's layout and heads_first ([..., S, H, D] and
// [..., H, S, D]: the swap is its own inverse); x itself for a heads_first node.
Value swap_to_layout(const Node& node, Value x) {
  if (node.attr<AttentionAttrs>().layout == AttentionLayout::heads_first) return x;
  Axes perm = leading_axes(x.rank());
  std::swap(perm[perm.size() - 3], perm[perm.size() - 2]);
  return transpose(x, perm);
}

// An attention node's operands with q, k and v (and an attention_grad's out and dout)
// heads_first, which the math below assumes.
std::vector<Value> heads_first_operands(const Node& node, std::span<const Value> inputs) {
  std::vector<Value> operands(inputs.begin(), inputs.end());
  for (size_t i : {0, 1, 2, 4, 5}) {
    if (i == 4 && node.op != OpKind::attention_grad) break;
    operands[i] = swap_to_layout(node, operands[i]);
  }
  return operands;
}

// Attention's dropout on x of the scores' shape (the identity without one): the node's keys are
// its last two operands.
Value attention_drop(const Node& node, std::span<const Value> inputs, Value x) {
  const auto& attrs = node.attr<AttentionAttrs>();
  if (attrs.dropout_rate == 0.0) return x;
  return drop(x, inputs[inputs.size() - 2], inputs.back(), attrs.dropout_rate, attrs.stream);
}

// softmax(q k^T * scale + mask) in f32 (f64 for f64 operands), before dropout.
Value attention_probs(const Node& node, std::span<const Value> inputs) {
  Value q = inputs[0], k = inputs[1], mask = inputs[3];
  int64_t rank = q.rank();
  Axes batch = leading_axes(rank - 2);
  Value scores = dot_general(q, k, DotAttrs{batch, batch, {rank - 1}, {rank - 1}},
                             compute_dtype(q.dtype()));
  Value shifted = scores * node.attr<AttentionAttrs>().scale + narrow(mask, scores.dtype());
  return stable_softmax(shifted, rank - 1);
}

// a b over the batch dims, contracting a's axis a_contract with b's b_contract: a rounded to
// `dtype` (the operands' dtype) first, accumulated in f32 for half dtypes.
Value attention_product(DType dtype, Value a, Value b, int64_t a_contract, int64_t b_contract) {
  Axes batch = leading_axes(b.rank() - 2);
  return dot_general(narrow(a, dtype), b, DotAttrs{batch, batch, {a_contract}, {b_contract}},
                     compute_dtype(dtype));
}

struct AttentionBackward {
  Value probs;    // P, before dropout
  Value dbiased;  // d loss / d (q k^T * scale + mask) = P (dP Z - rowsum(dO out))
};

// The backward of attention's softmax given its output `out` and cotangent `dout`, from core ops
// on the [..., Sq, Sk] scores (f32 for half operands); `inputs` are the node's operands.
AttentionBackward attention_backward(const Node& node, std::span<const Value> inputs, Value out,
                                     Value dout) {
  Value q = inputs[0], v = inputs[2];
  int64_t rank = q.rank();
  DType accumulate = compute_dtype(q.dtype());
  Value probs = attention_probs(node, inputs);
  Value dprobs = attention_drop(node, inputs,
                                attention_product(q.dtype(), dout, v, rank - 1, rank - 1));
  Value row_dot = reduce_sum(narrow(widen(dout), accumulate) * narrow(widen(out), accumulate),
                             {rank - 1}, true);
  return {probs, probs * (dprobs - row_dot)};
}

}  // namespace

namespace rules {

Value decompose_softmax(const Node& node, std::span<const Value> inputs) {
  int64_t axis = node.attr<SoftmaxAttrs>().axis;
  return narrow(stable_softmax(widen(inputs[0]), axis), node.dtype);
}

Value decompose_log_softmax(const Node& node, std::span<const Value> inputs) {
  int64_t axis = node.attr<SoftmaxAttrs>().axis;
  return narrow(stable_log_softmax(widen(inputs[0]), axis), node.dtype);
}

Value decompose_layer_norm(const Node& node, std::span<const Value> inputs) {
  Normalized x = normalize(widen(inputs[0]), node.attr<LayerNormAttrs>().eps);
  return narrow(x.xhat * widen(inputs[1]) + widen(inputs[2]), node.dtype);
}

Value decompose_layer_norm_grads(const Node& node, std::span<const Value> inputs) {
  Value in = widen(inputs[0]), dy = widen(inputs[2]);
  Normalized x = normalize(in, node.attr<LayerNormAttrs>().eps);
  Value g = dy * widen(inputs[1]);
  Value dx = (g - mean(g, {-1}, true) - x.xhat * mean(g * x.xhat, {-1}, true)) * x.inv_std;
  // Over the leading axes (reduce_sum with no axes would sum a single row's elements).
  auto sum_rows = [&](Value v) {
    return in.rank() == 1 ? v : reduce_sum(v, leading_axes(in.rank() - 1));
  };
  Value dgamma = sum_rows(dy * x.xhat), dbeta = sum_rows(dy);
  return narrow(concat({reshape(dx, {in.numel()}), dgamma, dbeta}, 0), node.dtype);
}

// x / sqrt(2) as a product with 1 / sqrt(2), as torch's kernels compute it: the gradient autodiff
// derives from this then multiplies too, where a divide would cost several times more.
Value decompose_gelu(const Node& node, std::span<const Value> inputs) {
  Value x = widen(inputs[0]);
  return narrow(x * 0.5 * (1.0 + erf(x * (1.0 / std::sqrt(2.0)))), node.dtype);
}

// dy (Phi(x) + x phi(x)): Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
Value decompose_gelu_grad(const Node& node, std::span<const Value> inputs) {
  Value x = widen(inputs[0]), dy = widen(inputs[1]);
  Value cdf = (1.0 + erf(x * (1.0 / std::sqrt(2.0)))) * 0.5;
  Value pdf = exp(x * x * -0.5) * (1.0 / std::sqrt(2.0 * std::numbers::pi));
  return narrow(dy * (cdf + x * pdf), node.dtype);
}

// Picks -log_softmax[n, label[n]] with a one-hot mask (no gather: ignored labels may lie outside
// [0, C)), then averages over the labels that are not ignored; all ignored gives 0 (PyTorch gives
// 0/0 = NaN, which would stop a masked-LM run on a batch where nothing happened to be masked).
Value decompose_cross_entropy(const Node& node, std::span<const Value> inputs) {
  int64_t ignore_index = node.attr<CrossEntropyAttrs>().ignore_index;
  Value logits = widen(inputs[0]);
  Value labels = inputs[1];
  Shape nc = logits.shape();
  Value log_probs = stable_log_softmax(logits, 1);
  Value classes = iota(logits.graph(), labels.dtype(), nc, 1);
  Value hit = eq(classes, broadcast_in_dim(labels, nc, {0}));
  Value picked = reduce_sum(select(hit, log_probs, scalar_like(log_probs, 0.0)), {1});
  Value counted = ne(labels, scalar_like(labels, static_cast<double>(ignore_index)));
  Value total = reduce_sum(select(counted, -picked, scalar_like(picked, 0.0)));
  Value count = max(reduce_sum(cast(counted, logits.dtype())), scalar_like(total, 1.0));
  return narrow(total / count, node.dtype);
}

// Both products accumulate in f32 for half inputs; the probabilities are rounded to the input
// dtype before the second product, as a fused kernel feeding a half matmul would.
Value decompose_attention(const Node& node, std::span<const Value> inputs) {
  std::vector<Value> in = heads_first_operands(node, inputs);
  Value q = in[0];
  Value probs = attention_drop(node, in, attention_probs(node, in));
  Value out = attention_product(q.dtype(), probs, in[2], q.rank() - 1, q.rank() - 2);
  return narrow(swap_to_layout(node, out), node.dtype);
}

// With P the probabilities, Z the dropout's scaled keep mask and dO the cotangent:
// dV = (P Z)^T dO, dP = (dO V^T) Z, dS = P (dP - rowsum(dO out)) * scale (rowsum(dP P) equals
// rowsum(dO out)), dQ = dS K, dK = dS^T Q; products in the operands' dtype as in the forward.
Value decompose_attention_grad(const Node& node, std::span<const Value> inputs) {
  std::vector<Value> in = heads_first_operands(node, inputs);
  Value q = in[0], k = in[1], dout = in[5];
  int64_t rank = q.rank();
  AttentionBackward back = attention_backward(node, in, in[4], dout);
  Value dv = attention_product(q.dtype(), attention_drop(node, in, back.probs), dout, rank - 2,
                               rank - 2);
  Value dscores = back.dbiased * node.attr<AttentionAttrs>().scale;
  Value dq = attention_product(q.dtype(), dscores, k, rank - 1, rank - 2);
  Value dk = attention_product(q.dtype(), dscores, q, rank - 2, rank - 2);
  std::vector<Value> flat;
  for (Value grad : {dq, dk, dv}) {
    flat.push_back(reshape(swap_to_layout(node, grad), {grad.numel()}));
  }
  return narrow(concat(flat, 0), node.dtype);
}

Value decompose_dropout(const Node& node, std::span<const Value> inputs) {
  const auto& attrs = node.attr<DropoutAttrs>();
  return narrow(drop(widen(inputs[0]), inputs[1], inputs[2], attrs.rate, attrs.stream),
                node.dtype);
}

// The fused gradient (attention_grad) sliced into dq, dk and dv: one kernel recomputes the
// probabilities block by block instead of keeping the [..., Sq, Sk] probabilities and dropout
// mask of the forward pass alive until the backward one.
std::vector<Value> vjp_attention(const VjpArgs& args) {
  const auto& attrs = args.node.attr<AttentionAttrs>();
  std::span<const Value> in = args.inputs;
  Value q = in[0], k = in[1], v = in[2];
  AttentionDropout dropout;
  if (attrs.dropout_rate > 0.0) dropout = {in[4], in[5], attrs.dropout_rate, attrs.stream};
  Value dout = args.cotangent;
  if (dout.dtype() != q.dtype()) dout = cast(dout, q.dtype());
  Value grads = attention_grad(q, k, v, in[3], args.output, dout, attrs.scale, dropout,
                               std::nullopt, attrs.layout);
  std::vector<Value> result(in.size());
  int64_t start = 0;
  for (size_t i = 0; i < 3; ++i) {
    int64_t size = in[i].numel();
    result[i] = reshape(slice(grads, {start}, {start + size}), in[i].shape());
    start += size;
  }
  // The mask's gradient from core ops, summed over the dims the mask broadcasts along. A padding
  // or causal mask depends on no parameter: nothing reads this [..., Sq, Sk] value then, and
  // dead-code elimination drops it (attention_fused_test checks a training graph for that).
  Value mask = in[3];
  Value dbiased = attention_backward(args.node, heads_first_operands(args.node, in),
                                     swap_to_layout(args.node, args.output),
                                     swap_to_layout(args.node, dout))
                      .dbiased;
  Axes broadcast;
  for (int64_t i = 0; i < mask.rank(); ++i) {
    if (mask.dim(i) == 1 && dbiased.dim(i) != 1) broadcast.push_back(i);
  }
  if (!broadcast.empty()) dbiased = reduce_sum(dbiased, broadcast, true);
  result[3] = narrow(dbiased, mask.dtype());
  return result;
}

// dx = y (dy - sum(dy y)) from the softmax's own output y: the backward pass reuses the forward
// result instead of rebuilding max, exp and sum from x (half dtypes compute in f32).
std::vector<Value> vjp_softmax(const VjpArgs& args) {
  int64_t axis = args.node.attr<SoftmaxAttrs>().axis;
  Value y = widen(args.output), dy = widen(args.cotangent);
  return {narrow(y * (dy - reduce_sum(dy * y, {axis}, true)), args.node.dtype)};
}

// One kernel that recomputes each row's statistics (a row stays in the L1 cache), where
// differentiating the decomposition gives a chain of row reductions and broadcasts that fuses
// into eight kernels and a dozen passes over [rows, width] (BERT-mini bf16, a step's 9 layer
// norms' backward: 10.4 -> 5.8 ms with a kernel for dx and one for d gamma and d beta), its
// result sliced into dx (a view of it) and [d gamma | d beta] (a copy: the optimizer reads them
// at the step's end, and a view would keep dx's bytes alive until then), then those two (views).
std::vector<Value> vjp_layer_norm(const VjpArgs& args) {
  Value x = args.inputs[0];
  Value grads = layer_norm_grads(x, args.inputs[1], args.cotangent,
                                 args.node.attr<LayerNormAttrs>().eps);
  int64_t numel = x.numel(), width = x.dim(-1);
  Value params = slice(grads, {numel}, {numel + 2 * width});
  return {reshape(slice(grads, {0}, {numel}), x.shape()), slice(params, {0}, {width}),
          slice(params, {width}, {2 * width})};
}

// Dropout is linear in x: its gradient drops the cotangent with the same keys, one loop
// instruction where differentiating the decomposition draws the bits, compares and selects.
std::vector<Value> vjp_dropout(const VjpArgs& args) {
  const auto& attrs = args.node.attr<DropoutAttrs>();
  return {dropout(args.cotangent, args.inputs[1], args.inputs[2], attrs.rate, attrs.stream),
          Value{}, Value{}};
}

// One gelu_grad node: one instruction of a loop kernel over x and dy, where differentiating the
// decomposition gives a dozen elementwise nodes (erf, exp and their products), each an
// instruction of the loop (BERT-mini bf16, a step's 4 loops over 2M elements: 8.0 -> 6.6 ms).
std::vector<Value> vjp_gelu(const VjpArgs& args) {
  return {gelu_grad(args.inputs[0], args.cotangent)};
}

// d logits = (softmax(logits) - one_hot(label)) * dy / count on counted rows, 0 on ignored ones:
// one fused pass after the softmax kernel, where differentiating the decomposition would rebuild
// log_softmax and its one-hot mask around many more passes over the (rows, classes) logits.
std::vector<Value> vjp_cross_entropy(const VjpArgs& args) {
  int64_t ignore_index = args.node.attr<CrossEntropyAttrs>().ignore_index;
  Value logits = widen(args.inputs[0]);
  Value labels = args.inputs[1];
  Shape nc = logits.shape();
  // Built in this order so that everything after the softmax fuses into one loop behind it.
  Value counted = ne(labels, scalar_like(labels, static_cast<double>(ignore_index)));
  Value count = max(reduce_sum(cast(counted, logits.dtype())), scalar_like(logits, 1.0));
  Value per_row = broadcast_in_dim(widen(args.cotangent) / count, {nc[0]}, {});
  Value row_scale = select(counted, per_row, scalar_like(per_row, 0.0));
  Value probs = softmax(logits, 1);
  Value classes = iota(logits.graph(), labels.dtype(), nc, 1);
  Value hit = eq(classes, broadcast_in_dim(labels, nc, {0}));
  Value one_hot = select(hit, scalar_like(logits, 1.0), scalar_like(logits, 0.0));
  Value grad = (probs - one_hot) * broadcast_in_dim(row_scale, nc, {0});
  return {narrow(grad, args.inputs[0].dtype()), Value{}};
}

}  // namespace rules
}  // namespace kiln
