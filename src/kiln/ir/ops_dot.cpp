// Contractions: dot_general (HLO semantics) and matmul built on it, with the dot_general VJP.
#include <algorithm>

#include "kiln/ir/error.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {
namespace {

// Normalises the axes of one operand in place and checks that none is used twice.
void normalize_dot_axes(Axes& batch, Axes& contract, int64_t rank, const char* side,
                        const Shape& shape) {
  std::vector<char> used(static_cast<size_t>(rank), 0);
  for (Axes* axes : {&batch, &contract}) {
    for (int64_t& axis : *axes) {
      check(axis >= -rank && axis < rank, "dot_general", side, " ", shape_str(shape), ": dim ",
            axis, " out of range for rank ", rank);
      if (axis < 0) axis += rank;
      check(!used[static_cast<size_t>(axis)], "dot_general", side, " ", shape_str(shape), ": dim ",
            axis, " used twice");
      used[static_cast<size_t>(axis)] = 1;
    }
  }
}


Axes range_axes(int64_t begin, int64_t end) {
  Axes axes;
  for (int64_t axis = begin; axis < end; ++axis) axes.push_back(axis);
  return axes;
}

// Position `axis` would have if `axes` were sorted.
int64_t rank_among(const Axes& axes, int64_t axis) {
  return std::count_if(axes.begin(), axes.end(), [axis](int64_t other) { return other < axis; });
}

Value transpose_unless_identity(Value x, const Axes& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return transpose(x, perm);
  }
  return x;
}

// Cotangent of one operand ("mine") of out = dot_general(...): contracts the cotangent with the
// other operand over the other's free dims, then restores my dim order. The product has dims
// batch..., my free..., my contracting (ordered as their partners in the other operand).
Value dot_operand_cotangent(Value cotangent, Value other, const Axes& my_batch,
                            const Axes& my_contract, const Axes& other_batch,
                            const Axes& other_contract, int64_t my_rank, bool mine_is_lhs,
                            DType out_dtype) {
  auto nb = static_cast<int64_t>(my_batch.size());
  Axes my_free = dot_free_dims(my_rank, my_batch, my_contract);
  Axes other_free = dot_free_dims(other.rank(), other_batch, other_contract);
  auto n_my_free = static_cast<int64_t>(my_free.size());
  // The cotangent's dims are batch..., lhs free..., rhs free...
  int64_t other_free_start = mine_is_lhs ? nb + n_my_free : nb;
  Axes cot_contract =
      range_axes(other_free_start, other_free_start + static_cast<int64_t>(other_free.size()));
  DotAttrs dims{range_axes(0, nb), other_batch, cot_contract, other_free};
  Value product = dot_general(cotangent, other, dims, out_dtype);

  Axes perm(static_cast<size_t>(my_rank));
  for (size_t i = 0; i < my_batch.size(); ++i) {
    perm[static_cast<size_t>(my_batch[i])] = static_cast<int64_t>(i);
  }
  for (size_t j = 0; j < my_free.size(); ++j) {
    perm[static_cast<size_t>(my_free[j])] = nb + static_cast<int64_t>(j);
  }
  for (size_t i = 0; i < my_contract.size(); ++i) {
    perm[static_cast<size_t>(my_contract[i])] =
        nb + n_my_free + rank_among(other_contract, other_contract[i]);
  }
  return transpose_unless_identity(product, perm);
}

}  // namespace

Value dot_general(Value lhs, Value rhs, const DotAttrs& dims, std::optional<DType> out_dtype) {
  detail::check_operands({lhs, rhs}, "dot_general");
  detail::check_same_dtype(lhs, rhs, "dot_general");
  detail::check_numeric(lhs, "dot_general");
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  DType dtype = lhs.dtype();
  DType result = out_dtype.value_or(dtype);
  check(result == dtype || (is_floating(dtype) && is_floating(result)), "dot_general",
        "output dtype ", dtype_name(result), " for ", dtype_name(dtype), " operands");

  DotAttrs attrs = dims;
  normalize_dot_axes(attrs.lhs_batch, attrs.lhs_contract, lhs.rank(), "lhs", ls);
  normalize_dot_axes(attrs.rhs_batch, attrs.rhs_contract, rhs.rank(), "rhs", rs);
  auto where = [&] { return "lhs " + shape_str(ls) + " and rhs " + shape_str(rs) + ": "; };
  check(attrs.lhs_batch.size() == attrs.rhs_batch.size(), "dot_general", where(),
        attrs.lhs_batch.size(), " vs ", attrs.rhs_batch.size(), " batch dims");
  check(attrs.lhs_contract.size() == attrs.rhs_contract.size(), "dot_general", where(),
        attrs.lhs_contract.size(), " vs ", attrs.rhs_contract.size(), " contracting dims");

  Shape shape;
  for (size_t i = 0; i < attrs.lhs_batch.size(); ++i) {
    int64_t l = ls[static_cast<size_t>(attrs.lhs_batch[i])];
    int64_t r = rs[static_cast<size_t>(attrs.rhs_batch[i])];
    check(l == r, "dot_general", where(), "batch dims ", l, " vs ", r);
    shape.push_back(l);
  }
  for (size_t i = 0; i < attrs.lhs_contract.size(); ++i) {
    int64_t l = ls[static_cast<size_t>(attrs.lhs_contract[i])];
    int64_t r = rs[static_cast<size_t>(attrs.rhs_contract[i])];
    check(l == r, "dot_general", where(), "contracting dims ", l, " vs ", r);
  }
  for (int64_t axis : dot_free_dims(lhs.rank(), attrs.lhs_batch, attrs.lhs_contract)) {
    shape.push_back(ls[static_cast<size_t>(axis)]);
  }
  for (int64_t axis : dot_free_dims(rhs.rank(), attrs.rhs_batch, attrs.rhs_contract)) {
    shape.push_back(rs[static_cast<size_t>(axis)]);
  }
  return lhs.graph().add_node(OpKind::dot_general, {lhs, rhs}, std::move(attrs), result,
                              std::move(shape));
}

// Rank-1 operands are an error (no numpy vector promotion): callers reshape explicitly.
Value matmul(Value a, Value b) {
  detail::check_operands({a, b}, "matmul");
  detail::check_same_dtype(a, b, "matmul");
  check(a.rank() >= 2 && b.rank() >= 2, "matmul", "a ", shape_str(a.shape()), " and b ",
        shape_str(b.shape()), ": operands need rank >= 2");
  check(a.dim(-1) == b.dim(-2), "matmul", "a ", shape_str(a.shape()), " and b ",
        shape_str(b.shape()), ": contracting dims ", a.dim(-1), " vs ", b.dim(-2));
  // A rank-2 b is shared by every batch: contract a's last dim with it, no broadcast needed.
  if (b.rank() == 2) return dot_general(a, b, DotAttrs{{}, {}, {a.rank() - 1}, {0}});

  Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  Shape batch = detail::broadcast_shapes({a_batch, b_batch}, "matmul");
  auto expand = [&batch](Value x) {
    Shape full = batch;
    full.push_back(x.dim(-2));
    full.push_back(x.dim(-1));
    return x.shape() == full ? x : broadcast_to(x, full);
  };
  auto nb = static_cast<int64_t>(batch.size());
  Axes batch_axes = range_axes(0, nb);
  return dot_general(expand(a), expand(b), DotAttrs{batch_axes, batch_axes, {nb + 1}, {nb}});
}

namespace rules {

std::vector<Value> vjp_dot_general(const VjpArgs& args) {
  const auto& dims = args.node.attr<DotAttrs>();
  Value lhs = args.inputs[0];
  Value rhs = args.inputs[1];
  DType operand_dtype = lhs.dtype();
  DType out_dtype = args.node.dtype;
  if (!is_floating(operand_dtype)) return {Value(), Value()};
  // The products accumulate in the node's output dtype (f32 for bf16 operands), then round once.
  Value cotangent = args.cotangent;
  if (cotangent.dtype() != operand_dtype) cotangent = cast(cotangent, operand_dtype);
  auto finish = [operand_dtype](Value g) {
    return g.dtype() == operand_dtype ? g : cast(g, operand_dtype);
  };
  Value d_lhs =
      dot_operand_cotangent(cotangent, rhs, dims.lhs_batch, dims.lhs_contract, dims.rhs_batch,
                            dims.rhs_contract, lhs.rank(), true, out_dtype);
  Value d_rhs =
      dot_operand_cotangent(cotangent, lhs, dims.rhs_batch, dims.rhs_contract, dims.lhs_batch,
                            dims.lhs_contract, rhs.rank(), false, out_dtype);
  return {finish(d_lhs), finish(d_rhs)};
}

}  // namespace rules
Axes dot_free_dims(int64_t rank, const Axes& batch, const Axes& contract) {
  Axes free;
  for (int64_t axis = 0; axis < rank; ++axis) {
    bool bound = std::find(batch.begin(), batch.end(), axis) != batch.end() ||
                 std::find(contract.begin(), contract.end(), axis) != contract.end();
    if (!bound) free.push_back(axis);
  }
  return free;
}

Axes concat_axes(const Axes& a, const Axes& b, const Axes& c) {
  Axes all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  return all;
}

}  // namespace kiln
