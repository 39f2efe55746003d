// The op contract: kinds and typed attributes of every op (the registry of rules is in
// op_registry.h). An op's builder, shape rule and VJP rule live together in one ops_<family>.cpp;
// its kernels live with each backend.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kiln/ir/dtype.h"
#include "kiln/ir/op_list.h"
#include "kiln/ir/shape.h"
#include "kiln/ir/tensor.h"

namespace kiln {

enum class OpKind : uint8_t {
#define KILN_OP_ENUM(name, category, gradient) name,
  KILN_OPS(KILN_OP_ENUM)
#undef KILN_OP_ENUM
};

enum class OpCategory : uint8_t { source, unary, binary, structural, composite, collective };

inline constexpr int kNumOps = 0
#define KILN_OP_COUNT(name, category, gradient) +1
    KILN_OPS(KILN_OP_COUNT)
#undef KILN_OP_COUNT
    ;

// ---- typed attributes, one struct per op family ----
// Attributes compare equal field by field (what common-subexpression elimination asks); inputs
// and constants have none: inputs are never merged and constants compare by their bytes.

struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};

// data: batches; weight: trainable parameters; state: optimizer state and other carried values.
enum class InputRole : uint8_t { data, weight, state };
struct InputAttrs {
  std::string name;  // for dumps and errors; not part of the fingerprint
  InputRole role = InputRole::data;
};

struct ConstantAttrs {
  Tensor value;  // same dtype and shape as the node
};

struct IotaAttrs {
  int64_t dim = 0;  // output[i...] = index along `dim`

  bool operator==(const IotaAttrs&) const = default;
};

// Philox-4x32-10 bits: key = seed (i64 scalar operand), counter = (element/4, stream, offset lo,
// offset hi); element i takes word i%4 of its block. With an i64 vector offset of shape[0] keys,
// each leading row r is keyed by offset[r] and i counts within the row. See kiln/ir/philox.h.
struct RandomBitsAttrs {
  uint32_t stream = 0;

  bool operator==(const RandomBitsAttrs&) const = default;
};

enum class CompareDir : uint8_t { eq, ne, lt, le, gt, ge };
struct CompareAttrs {
  CompareDir dir = CompareDir::eq;

  bool operator==(const CompareAttrs&) const = default;
};

// Operand dim i goes to output dim dims[i] (strictly increasing); its size is 1 or the output's.
struct BroadcastAttrs {
  Axes dims;

  bool operator==(const BroadcastAttrs&) const = default;
};

// Output dim i is operand dim perm[i].
struct TransposeAttrs {
  Axes perm;

  bool operator==(const TransposeAttrs&) const = default;
};

// Output dim i covers operand indices start[i], start[i]+stride[i], ... < limit[i].
struct SliceAttrs {
  Shape start, limit, stride;

  bool operator==(const SliceAttrs&) const = default;
};

struct ConcatAttrs {
  int64_t axis = 0;

  bool operator==(const ConcatAttrs&) const = default;
};

// low/high elements of `value` added before/after each dim (non-negative).
struct PadAttrs {
  Shape low, high;
  double value = 0.0;

  bool operator==(const PadAttrs&) const = default;
};

// Sorted, unique axes; reduced dims are removed from the output.
struct ReduceAttrs {
  Axes axes;

  bool operator==(const ReduceAttrs&) const = default;
};

// As HLO's dot_general: output dims are batch..., lhs free..., rhs free... (each in operand order).
struct DotAttrs {
  Axes lhs_batch, rhs_batch, lhs_contract, rhs_contract;

  bool operator==(const DotAttrs&) const = default;
};

// The dims of a dot_general operand of `rank` that are neither batch nor contracting, in order.
Axes dot_free_dims(int64_t rank, const Axes& batch, const Axes& contract);
// a, then b, then c: an operand's dims regrouped, e.g. (batch, free, contracting).
Axes concat_axes(const Axes& a, const Axes& b, const Axes& c);

// gather: out = operand.shape[:axis] + indices.shape + operand.shape[axis+1:], picking along axis.
// scatter_add: operand + updates (shaped like gather's output) added at the same places.
struct GatherAttrs {
  int64_t axis = 0;

  bool operator==(const GatherAttrs&) const = default;
};

struct SoftmaxAttrs {
  int64_t axis = -1;  // normalised (non-negative) by the builder

  bool operator==(const SoftmaxAttrs&) const = default;
};

// Over the last axis, biased variance, as torch.nn.LayerNorm.
struct LayerNormAttrs {
  double eps = 1e-12;

  bool operator==(const LayerNormAttrs&) const = default;
};

// Mean over targets != ignore_index, as torch.nn.functional.cross_entropy.
struct CrossEntropyAttrs {
  int64_t ignore_index = -100;

  bool operator==(const CrossEntropyAttrs&) const = default;
};

// Where attention's q, k, v and output keep the heads: [..., H, S, D] (heads_first), or
// [..., S, H, D] (seq_first), which is a projection's [B, S, H * D] reshaped, with no transposes
// around the op. The scores, the mask and the dropout bits are [..., H, Sq, Sk] either way.
enum class AttentionLayout : uint8_t { heads_first, seq_first };
// An operand's shape in `layout` as heads_first's [..., H, S, D] (ops_composite.cpp).
Shape heads_first_shape(const Shape& shape, AttentionLayout layout);

// softmax(q k^T * scale + mask) v; mask is additive, same rank as the scores, dims 1 or equal.
// With dropout_rate > 0 the probabilities go through dropout (stream `stream` of the seed and
// offset operands) before the product with v. attention_grad carries the forward's attributes.
struct AttentionAttrs {
  double scale = 1.0;
  double dropout_rate = 0.0;
  uint32_t stream = 0;
  AttentionLayout layout = AttentionLayout::heads_first;

  bool operator==(const AttentionAttrs&) const = default;
};

// Drops an element when its random bits (stream `stream`) are below rate * 2^32; scales the rest
// by 1 / (1 - rate).
struct DropoutAttrs {
  double rate = 0.1;
  uint32_t stream = 0;

  bool operator==(const DropoutAttrs&) const = default;
};

using Attrs = std::variant<NoAttrs, InputAttrs, ConstantAttrs, IotaAttrs, RandomBitsAttrs,
                           CompareAttrs, BroadcastAttrs, TransposeAttrs, SliceAttrs, ConcatAttrs,
                           PadAttrs, ReduceAttrs, DotAttrs, GatherAttrs, SoftmaxAttrs,
                           LayerNormAttrs, CrossEntropyAttrs, AttentionAttrs, DropoutAttrs>;

std::string_view op_name(OpKind kind);
// Throws Error when unknown.
OpKind op_from_name(std::string_view name);
std::string_view compare_dir_name(CompareDir dir);

}  // namespace kiln
