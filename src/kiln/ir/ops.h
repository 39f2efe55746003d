// Builders: the way graphs are written. Each infers its output dtype and shape when called and
// throws kiln::Error("[op] ...") naming the op and the offending shapes when they don't fit.
//
// Elementwise binary builders broadcast numpy-style (dims aligned from the right, size 1
// stretches) by inserting explicit `broadcast` nodes, so core binary nodes always see equal
// shapes. Operands must share a dtype; a C++ double operand takes the other operand's dtype.
#pragma once

#include <optional>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

// ---- sources ----
Value constant(Graph& graph, const Tensor& value);
// A scalar constant broadcast to `shape`.
Value full(Graph& graph, double value, DType dtype, const Shape& shape);
Value zeros_like(Value x);
Value ones_like(Value x);
// A rank-0 constant of x's dtype.
Value scalar_like(Value x, double value);
Value iota(Graph& graph, DType dtype, const Shape& shape, int64_t dim);
// u32 Philox bits; seed is an i64 scalar, offset an i64 scalar or an i64 vector of shape[0] keys,
// one per leading row (usually inputs, so steps reuse one program). See kiln/ir/philox.h.
Value random_bits(Value seed, Value offset, const Shape& shape, uint32_t stream);

// ---- elementwise unary ----
Value neg(Value x);
Value abs(Value x);
Value sign(Value x);
Value exp(Value x);
Value log(Value x);
Value tanh(Value x);
Value logistic(Value x);  // 1 / (1 + exp(-x))
Value sqrt(Value x);
Value rsqrt(Value x);
Value erf(Value x);
Value logical_not(Value x);  // bool only

// ---- elementwise binary (broadcasting) ----
Value add(Value a, Value b);
Value sub(Value a, Value b);
Value mul(Value a, Value b);
Value div(Value a, Value b);
Value max(Value a, Value b);
Value min(Value a, Value b);
Value pow(Value a, Value b);
Value logical_and(Value a, Value b);  // bool only
Value logical_or(Value a, Value b);   // bool only

Value operator+(Value a, Value b);
Value operator-(Value a, Value b);
Value operator*(Value a, Value b);
Value operator/(Value a, Value b);
Value operator-(Value x);
Value operator+(Value a, double b);
Value operator-(Value a, double b);
Value operator*(Value a, double b);
Value operator/(Value a, double b);
Value operator+(double a, Value b);
Value operator-(double a, Value b);
Value operator*(double a, Value b);
Value operator/(double a, Value b);
Value pow(Value a, double exponent);

// ---- compare and select (broadcasting) ----
Value compare(Value a, Value b, CompareDir dir);  // -> bool
Value eq(Value a, Value b);
Value ne(Value a, Value b);
Value lt(Value a, Value b);
Value le(Value a, Value b);
Value gt(Value a, Value b);
Value ge(Value a, Value b);
Value select(Value pred, Value on_true, Value on_false);

// ---- types and layout ----
Value cast(Value x, DType dtype);
// HLO broadcast_in_dim: operand dim i -> output dim dims[i].
Value broadcast_in_dim(Value x, const Shape& shape, const Axes& dims);
// Numpy rules: dims aligned from the right.
Value broadcast_to(Value x, const Shape& shape);
// At most one -1, inferred from the element count.
Value reshape(Value x, const Shape& shape);
Value transpose(Value x, const Axes& perm);
// Swaps the last two dims.
Value transpose_last2(Value x);
// Empty stride means all ones.
Value slice(Value x, const Shape& start, const Shape& limit, const Shape& stride = {});
Value concat(const std::vector<Value>& parts, int64_t axis);
Value pad(Value x, const Shape& low, const Shape& high, double value = 0.0);

// ---- reductions (axes may be negative; empty axes = all axes) ----
Value reduce_sum(Value x, const Axes& axes = {}, bool keepdims = false);
Value reduce_max(Value x, const Axes& axes = {}, bool keepdims = false);
Value mean(Value x, const Axes& axes = {}, bool keepdims = false);

// ---- contractions ----
// Operands share a dtype; the output dtype defaults to it (bf16 inputs may ask for f32).
Value dot_general(Value lhs, Value rhs, const DotAttrs& dims,
                  std::optional<DType> out_dtype = std::nullopt);
// a[..., m, k] x b[..., k, n] -> [..., m, n]; batch dims broadcast, rank-2 b is shared by all.
Value matmul(Value a, Value b);

// ---- gather / scatter (indices i32 or i64) ----
Value gather(Value operand, Value indices, int64_t axis);
Value scatter_add(Value operand, Value indices, Value updates, int64_t axis);

// ---- composites ----
Value softmax(Value x, int64_t axis = -1);
Value log_softmax(Value x, int64_t axis = -1);
// Over the last axis; gamma and beta have the last dim's size.
Value layer_norm(Value x, Value gamma, Value beta, double eps);
// layer_norm's gradients given dy, the cotangent of its output (x, gamma and dy of one floating
// dtype), with xhat = (x - mean) / sqrt(var + eps) and g = dy * gamma along the last axis, in one
// flat result [dx | d gamma | d beta] (one pass over x and dy computes all three):
// dx = (g - mean(g) - xhat mean(g xhat)) / sqrt(var + eps), x's elements in x's order; then
// d gamma = sum of dy xhat and d beta = sum of dy over the leading axes, the last dim's size each.
Value layer_norm_grads(Value x, Value gamma, Value dy, double eps);
// x * 0.5 * (1 + erf(x / sqrt(2)))
Value gelu(Value x);
// dy * gelu'(x), gelu's gradient: dy (Phi(x) + x phi(x)) with Phi and phi the standard normal's
// distribution and density. x and dy of one floating dtype and shape.
Value gelu_grad(Value x, Value dy);
// logits [N, C] (floating), labels [N] (i32/i64) -> scalar mean over labels != ignore_index.
Value cross_entropy(Value logits, Value labels, int64_t ignore_index = -100);
// Dropout on attention's probabilities, keyed as the dropout op keys its bits: the element
// (..., i, j) of the probabilities is dropped exactly when dropout(probs, seed, offset, rate,
// stream) would drop it. Rate 0 (the default): no dropout, no keys needed.
struct AttentionDropout {
  Value seed, offset;
  double rate = 0.0;
  uint32_t stream = 0;
};
// q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv] of one dtype, mask additive of any floating
// dtype with the scores' rank (dims 1 or equal to [..., Sq, Sk]) -> [..., Sq, Dv]:
// dropout(softmax(q k^T * scale + mask)) v. The output dtype defaults to q's (bf16 operands may
// ask for f32: bf16 products accumulated in f32, as dot_general). With layout seq_first, q is
// [..., Sq, H, D], k [..., Sk, H, D], v [..., Sk, H, Dv] and the result [..., Sq, H, Dv], while
// the scores (and so the mask) are still [..., H, Sq, Sk].
Value attention(Value q, Value k, Value v, Value mask, double scale,
                const AttentionDropout& dropout = {}, std::optional<DType> out_dtype = std::nullopt,
                AttentionLayout layout = AttentionLayout::heads_first);
// The gradient of attention(q, k, v, mask, scale, dropout, out_dtype, layout) given its output
// `out` and the output's cotangent `dout` (q's dtype), as one flat vector [dq | dk | dv], each in
// its operand's layout (the IR has one result per node; attention's VJP slices it). Output dtype
// as for attention.
Value attention_grad(Value q, Value k, Value v, Value mask, Value out, Value dout, double scale,
                     const AttentionDropout& dropout = {},
                     std::optional<DType> out_dtype = std::nullopt,
                     AttentionLayout layout = AttentionLayout::heads_first);
// rate in [0, 1); rate 0 returns x itself. seed: an i64 scalar; offset: an i64 scalar, or an i64
// vector of x.dim(0) keys so that each leading row's mask depends on its own key (random_bits).
Value dropout(Value x, Value seed, Value offset, double rate, uint32_t stream);

// ---- collectives ----
// The elementwise sum of x over every replica of the program (float or integer dtypes; half
// precision summed in f32 and rounded once, as reduce_sum). At one replica, x itself.
Value all_reduce(Value x);

}  // namespace kiln
