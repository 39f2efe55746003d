// Algebraic simplification: identities that leave every value exactly as it was (but for the
// sign of a zero: x + 0 keeps x's), found in the graphs autodiff and the optimizer build:
// multiplying or dividing by one, adding or subtracting zero, double negation, casts to the same
// dtype or through a lossless one, layout ops that do nothing or compose into one, selects on a
// constant predicate or between equal branches, reductions of dims of size 1 (a reshape), and,
// for backends whose products read strided operands, transposes that a dot_general reads (its
// dims renumbered instead).
// x * 0 stays: it is NaN for x = NaN or inf; so do collectives (all_reduce is x itself only at
// one replica). Replaced nodes are left dead for dce.
#include <algorithm>
#include <vector>

#include "kiln/compiler/passes.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

// Whether every element of `value` equals `x`: a constant, seen through broadcasts and reshapes.
bool all_equal(Value value, double x) {
  while (value.op() == OpKind::broadcast || value.op() == OpKind::reshape) {
    value = value.graph().value(value.node().inputs[0]);
  }
  if (value.op() != OpKind::constant) return false;
  const Tensor& tensor = value.node().attr<ConstantAttrs>().value;
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    if (tensor.get(i) != x) return false;
  }
  return true;
}

Value operand_of(const Value& value, size_t index) {
  return value.graph().value(value.node().inputs[index]);
}

// Every value of `from` converts to `to` and back unchanged.
bool lossless(DType from, DType to) {
  switch (from) {
    case DType::boolean:
      return true;
    case DType::bf16:
    case DType::f16:
      return to == DType::f32 || to == DType::f64;
    case DType::f32:
      return to == DType::f64;
    case DType::i32:
      return to == DType::i64 || to == DType::f64;
    case DType::u32:
      return to == DType::i64 || to == DType::f64;
    default:
      return false;
  }
}

Value simplify_binary(const Node& node, Value a, Value b) {
  switch (node.op) {
    case OpKind::mul:
      if (all_equal(b, 1.0)) return a;
      if (all_equal(a, 1.0)) return b;
      break;
    case OpKind::div:
      if (all_equal(b, 1.0)) return a;
      break;
    case OpKind::add:
      if (all_equal(b, 0.0)) return a;
      if (all_equal(a, 0.0)) return b;
      break;
    case OpKind::sub:
      if (all_equal(b, 0.0)) return a;
      break;
    default:
      break;
  }
  return Value();
}

// The layout ops, each rebuilt through its builder (which returns the operand itself when the
// op does nothing) and composed with a layout op of the same kind below it.
Value simplify_layout(const Node& node, Value x) {
  switch (node.op) {
    case OpKind::broadcast: {
      Axes dims = node.attr<BroadcastAttrs>().dims;
      if (x.op() == OpKind::broadcast) {  // y dim i -> x dim inner[i] -> output dim dims[...]
        const Axes& inner = x.node().attr<BroadcastAttrs>().dims;
        Axes composed;
        for (int64_t dim : inner) composed.push_back(dims[static_cast<size_t>(dim)]);
        return broadcast_in_dim(operand_of(x, 0), node.shape, composed);
      }
      return broadcast_in_dim(x, node.shape, dims);
    }
    case OpKind::reshape:
      if (x.op() == OpKind::reshape) return reshape(operand_of(x, 0), node.shape);
      // A filled tensor reshaped is the same fill of the new shape.
      if (x.op() == OpKind::broadcast && operand_of(x, 0).rank() == 0) {
        return broadcast_in_dim(operand_of(x, 0), node.shape, {});
      }
      return reshape(x, node.shape);
    case OpKind::transpose: {
      const Axes& perm = node.attr<TransposeAttrs>().perm;
      if (x.op() == OpKind::transpose) {  // output dim i = x dim perm[i] = y dim inner[perm[i]]
        const Axes& inner = x.node().attr<TransposeAttrs>().perm;
        Axes composed;
        for (int64_t dim : perm) composed.push_back(inner[static_cast<size_t>(dim)]);
        return transpose(operand_of(x, 0), composed);
      }
      if (x.op() == OpKind::broadcast && operand_of(x, 0).rank() == 0) {
        return broadcast_in_dim(operand_of(x, 0), node.shape, {});
      }
      return transpose(x, perm);
    }
    default:
      return Value();
  }
}

// A reduction whose reduced dims all have size 1 moves no data: a reshape of its operand.
Value simplify_reduce(const Node& node, Value x) {
  const Axes& axes = node.attr<ReduceAttrs>().axes;
  bool trivial = std::all_of(axes.begin(), axes.end(), [&](int64_t axis) {
    return x.shape()[static_cast<size_t>(axis)] == 1;
  });
  return trivial ? reshape(x, node.shape) : Value();
}

// A dot_general operand as the dot reads it: `operand` with its batch and contracting dims.
struct DotOperand {
  Value operand;
  Axes batch, contract;
};

// An operand that is a transpose, or casts of one (bf16, or the bf16 pass's round trip through
// bf16), read as the transpose's operand (cast first) with its dims renumbered, when its free dims
// keep their order, so that the product is the same array summed in the same order. A backend
// that reads strided operands in place then moves no data for it (the heads of attention, split
// from and merged into the hidden dim).
DotOperand through_transpose(const DotOperand& in) {
  std::vector<DType> casts;  // outermost first
  Value transposed = in.operand;
  for (; transposed.op() == OpKind::cast; transposed = operand_of(transposed, 0)) {
    casts.push_back(transposed.dtype());
  }
  if (transposed.op() != OpKind::transpose) return in;
  const Axes& perm = transposed.node().attr<TransposeAttrs>().perm;  // result dim d = source perm[d]
  auto source_dims = [&](const Axes& dims) {
    Axes mapped;
    for (int64_t dim : dims) mapped.push_back(perm[static_cast<size_t>(dim)]);
    return mapped;
  };
  Axes free = source_dims(dot_free_dims(in.operand.rank(), in.batch, in.contract));
  if (!std::is_sorted(free.begin(), free.end())) return in;
  Value source = operand_of(transposed, 0);
  for (auto dtype = casts.rbegin(); dtype != casts.rend(); ++dtype) source = cast(source, *dtype);
  return {source, source_dims(in.batch), source_dims(in.contract)};
}

Value simplify_dot(const Node& node, const std::vector<Value>& operands) {
  const DotAttrs& dims = node.attr<DotAttrs>();
  DotOperand lhs = through_transpose({operands[0], dims.lhs_batch, dims.lhs_contract});
  DotOperand rhs = through_transpose({operands[1], dims.rhs_batch, dims.rhs_contract});
  if (lhs.operand.is(operands[0]) && rhs.operand.is(operands[1])) return Value();
  return dot_general(lhs.operand, rhs.operand,
                     DotAttrs{lhs.batch, rhs.batch, lhs.contract, rhs.contract}, node.dtype);
}

}  // namespace

Module simplify(const Module& module, bool fold_transposes_into_dots) {
  return rewrite_module(module, [=](Graph&, const Node& node, int32_t,
                                    const std::vector<Value>& operands) {
    switch (node.op) {
      case OpKind::add:
      case OpKind::sub:
      case OpKind::mul:
      case OpKind::div:
        return simplify_binary(node, operands[0], operands[1]);
      case OpKind::neg:
        return operands[0].op() == OpKind::neg ? operand_of(operands[0], 0) : Value();
      case OpKind::cast: {
        Value x = operands[0];
        if (x.op() == OpKind::cast && lossless(operand_of(x, 0).dtype(), x.dtype())) {
          x = operand_of(x, 0);
        }
        return cast(x, node.dtype);
      }
      case OpKind::select:
        if (operands[1].is(operands[2]) || all_equal(operands[0], 1.0)) return operands[1];
        if (all_equal(operands[0], 0.0)) return operands[2];
        return Value();
      case OpKind::broadcast:
      case OpKind::reshape:
      case OpKind::transpose:
        return simplify_layout(node, operands[0]);
      case OpKind::reduce_sum:
      case OpKind::reduce_max:
        return simplify_reduce(node, operands[0]);
      case OpKind::dot_general:
        return fold_transposes_into_dots ? simplify_dot(node, operands) : Value();
      default:
        return Value();
    }
  });
}

}  // namespace kiln
