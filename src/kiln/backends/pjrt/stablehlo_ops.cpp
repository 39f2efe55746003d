// The StableHLO of each of Kiln's core ops. Elementwise ops map one to one; reductions and
// scatters of half-precision values accumulate in f32 and round once, as the reference backend
// rounds once; gather and scatter_add along one axis become StableHLO gather/scatter with that
// axis collapsed. all_reduce sums over one group of every replica (cross-replica mode: no
// channel handle).
#include <limits>
#include <numeric>

#include "kiln/backends/pjrt/stablehlo_lowering.h"
#include "kiln/ir/error.h"

namespace kiln::pjrt {
namespace {

bool is_half(DType dtype) { return dtype == DType::bf16 || dtype == DType::f16; }

std::string_view unary_op(OpKind op) {
  switch (op) {
    case OpKind::neg:
      return "stablehlo.negate";
    case OpKind::abs:
      return "stablehlo.abs";
    case OpKind::sign:
      return "stablehlo.sign";
    case OpKind::exp:
      return "stablehlo.exponential";
    case OpKind::log:
      return "stablehlo.log";
    case OpKind::tanh:
      return "stablehlo.tanh";
    case OpKind::logistic:
      return "stablehlo.logistic";
    case OpKind::sqrt:
      return "stablehlo.sqrt";
    case OpKind::rsqrt:
      return "stablehlo.rsqrt";
    case OpKind::erf:
      return "chlo.erf";  // StableHLO's companion dialect; XLA expands it
    case OpKind::logical_not:
      return "stablehlo.not";
    default:
      return {};
  }
}

std::string_view binary_op(OpKind op) {
  switch (op) {
    case OpKind::add:
      return "stablehlo.add";
    case OpKind::sub:
      return "stablehlo.subtract";
    case OpKind::mul:
      return "stablehlo.multiply";
    case OpKind::div:
      return "stablehlo.divide";
    case OpKind::max:
      return "stablehlo.maximum";
    case OpKind::min:
      return "stablehlo.minimum";
    case OpKind::pow:
      return "stablehlo.power";
    case OpKind::logical_and:
      return "stablehlo.and";
    case OpKind::logical_or:
      return "stablehlo.or";
    default:
      return {};
  }
}

std::string_view direction(CompareDir dir) {
  switch (dir) {
    case CompareDir::eq:
      return "EQ";
    case CompareDir::ne:
      return "NE";
    case CompareDir::lt:
      return "LT";
    case CompareDir::le:
      return "LE";
    case CompareDir::gt:
      return "GT";
    case CompareDir::ge:
      return "GE";
  }
  return "EQ";
}

// The identity of max: -inf for floats, the smallest value for integers.
double lowest(DType dtype) {
  if (is_floating(dtype)) return -std::numeric_limits<double>::infinity();
  if (dtype == DType::i32) return std::numeric_limits<int32_t>::min();
  if (dtype == DType::u32) return 0.0;
  return static_cast<double>(std::numeric_limits<int64_t>::min());
}

Ssa reduce(StableHloWriter& writer, const Node& node, const Ssa& x, bool sum) {
  const Axes& axes = node.attr<ReduceAttrs>().axes;
  DType compute = sum && is_half(node.dtype) ? DType::f32 : node.dtype;
  std::string element = element_type(compute);
  Ssa input = writer.convert(x, element);
  Ssa init = writer.splat(compute, sum ? 0.0 : lowest(compute));
  std::string region = sum                    ? writer.binary_region("stablehlo.add", element)
                       : is_floating(compute) ? writer.nan_max_region(element)
                                              : writer.binary_region("stablehlo.maximum", element);
  Ssa result = writer.op("stablehlo.reduce", {input, init}, element, node.shape,
                         "dimensions = " + i64_array(axes), region);
  return writer.convert(result, element_type(node.dtype));
}

Ssa dot_general(StableHloWriter& writer, const Node& node, const Ssa& lhs, const Ssa& rhs) {
  const DotAttrs& dims = node.attr<DotAttrs>();
  std::string numbers;
  auto field = [&numbers](std::string_view name, const Axes& axes) {
    if (axes.empty()) return;
    if (!numbers.empty()) numbers += ", ";
    numbers += std::string(name) + " = " + int_list(axes);
  };
  field("lhs_batching_dimensions", dims.lhs_batch);
  field("rhs_batching_dimensions", dims.rhs_batch);
  field("lhs_contracting_dimensions", dims.lhs_contract);
  field("rhs_contracting_dimensions", dims.rhs_contract);
  std::string attributes = "dot_dimension_numbers = #stablehlo.dot<" + numbers + ">";
  // f32 products in f32 on every device (TPUs and GPUs would otherwise round operands to
  // bf16 or tf32); half operands are half already.
  if (lhs.element == "f32" || lhs.element == "f64") {
    attributes +=
        ", precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]";
  }
  return writer.op("stablehlo.dot_general", {lhs, rhs}, node.dtype, node.shape, attributes);
}

// The dims of gather's output (and scatter_add's updates) that come from the operand, i.e. all
// but the indices' dims, which sit at [axis, axis + indices rank).
std::vector<int64_t> window_dims(int64_t operand_rank, int64_t axis, int64_t indices_rank) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < axis; ++d) dims.push_back(d);
  for (int64_t d = axis + 1; d < operand_rank; ++d) dims.push_back(d - 1 + indices_rank);
  return dims;
}

Ssa gather(StableHloWriter& writer, const Node& node, const Ssa& operand, const Ssa& indices) {
  int64_t axis = node.attr<GatherAttrs>().axis;
  auto rank = static_cast<int64_t>(operand.shape.size());
  auto indices_rank = static_cast<int64_t>(indices.shape.size());
  std::vector<int64_t> offset_dims = window_dims(rank, axis, indices_rank);
  std::string numbers;
  if (!offset_dims.empty()) numbers = "offset_dims = " + int_list(offset_dims) + ", ";
  numbers += "collapsed_slice_dims = [" + std::to_string(axis) + "], start_index_map = [" +
             std::to_string(axis) + "], index_vector_dim = " + std::to_string(indices_rank);
  Shape slice_sizes = operand.shape;
  slice_sizes[static_cast<size_t>(axis)] = 1;
  return writer.op("stablehlo.gather", {operand, indices}, node.dtype, node.shape,
                   "dimension_numbers = #stablehlo.gather<" + numbers +
                       ">, slice_sizes = " + i64_array(slice_sizes));
}

Ssa scatter_add(StableHloWriter& writer, const Node& node, const Ssa& operand, const Ssa& indices,
                const Ssa& updates) {
  int64_t axis = node.attr<GatherAttrs>().axis;
  auto rank = static_cast<int64_t>(operand.shape.size());
  auto indices_rank = static_cast<int64_t>(indices.shape.size());
  std::vector<int64_t> update_dims = window_dims(rank, axis, indices_rank);
  std::string numbers;
  if (!update_dims.empty()) numbers = "update_window_dims = " + int_list(update_dims) + ", ";
  numbers += "inserted_window_dims = [" + std::to_string(axis) +
             "], scatter_dims_to_operand_dims = [" + std::to_string(axis) +
             "], index_vector_dim = " + std::to_string(indices_rank);
  std::string element = element_type(is_half(node.dtype) ? DType::f32 : node.dtype);
  std::string region = writer.binary_region("stablehlo.add", element);
  Ssa result = writer.op(
      "stablehlo.scatter",
      {writer.convert(operand, element), indices, writer.convert(updates, element)}, element,
      node.shape, "scatter_dimension_numbers = #stablehlo.scatter<" + numbers + ">", region);
  return writer.convert(result, element_type(node.dtype));
}

Ssa pad(StableHloWriter& writer, const Node& node, const Ssa& x) {
  const PadAttrs& attrs = node.attr<PadAttrs>();
  Ssa value = writer.splat(node.dtype, attrs.value);
  std::vector<int64_t> interior(attrs.low.size(), 0);
  return writer.op("stablehlo.pad", {x, value}, node.dtype, node.shape,
                   "edge_padding_low = " + i64_array(attrs.low) + ", edge_padding_high = " +
                       i64_array(attrs.high) + ", interior_padding = " + i64_array(interior));
}

// Half-precision values are summed in f32 and rounded once, as reduce_sum.
Ssa all_reduce(StableHloWriter& writer, const Node& node, const Ssa& x, int replicas) {
  std::string element = element_type(is_half(node.dtype) ? DType::f32 : node.dtype);
  std::vector<int64_t> group(static_cast<size_t>(replicas));
  std::iota(group.begin(), group.end(), int64_t{0});
  std::string groups = "replica_groups = dense<[" + int_list(group) + "]> : tensor<1x" +
                       std::to_string(replicas) + "xi64>";
  Ssa result = writer.op("stablehlo.all_reduce", {writer.convert(x, element)}, element, node.shape,
                         groups, writer.binary_region("stablehlo.add", element));
  return writer.convert(result, element_type(node.dtype));
}

}  // namespace

Ssa lower_node(StableHloWriter& writer, const Node& node, const std::vector<Ssa>& operands,
               int replicas) {
  // StableHLO has no abs or sign of unsigned integers: abs is x itself, sign is min(x, 1).
  if (node.dtype == DType::u32 && node.op == OpKind::abs) return operands[0];
  if (node.dtype == DType::u32 && node.op == OpKind::sign) {
    return writer.same_type("stablehlo.minimum",
                            {operands[0], writer.splat(DType::u32, 1.0, node.shape)});
  }
  if (std::string_view name = unary_op(node.op); !name.empty()) {
    return writer.same_type(name, operands);
  }
  if (std::string_view name = binary_op(node.op); !name.empty()) {
    if ((node.op == OpKind::max || node.op == OpKind::min) && is_floating(node.dtype)) {
      return writer.nan_propagating(name, operands[0], operands[1]);
    }
    return writer.same_type(name, operands);
  }
  switch (node.op) {
    case OpKind::constant:
      return writer.constant(node.attr<ConstantAttrs>().value);
    case OpKind::iota:
      return writer.op("stablehlo.iota", {}, node.dtype, node.shape,
                       "iota_dimension = " + std::to_string(node.attr<IotaAttrs>().dim) + " : i64");
    case OpKind::random_bits:
      return lower_random_bits(writer, operands[0], operands[1],
                               node.attr<RandomBitsAttrs>().stream, node.shape);
    case OpKind::compare:
      return writer.op("stablehlo.compare", operands, node.dtype, node.shape,
                       "comparison_direction = #stablehlo<comparison_direction " +
                           std::string(direction(node.attr<CompareAttrs>().dir)) + ">");
    case OpKind::select:
      return writer.op("stablehlo.select", operands, node.dtype, node.shape);
    case OpKind::cast:
      return writer.op("stablehlo.convert", operands, node.dtype, node.shape);
    case OpKind::broadcast:
      return writer.broadcast(operands[0], node.shape, node.attr<BroadcastAttrs>().dims);
    case OpKind::reshape:
      return writer.op("stablehlo.reshape", operands, node.dtype, node.shape);
    case OpKind::transpose:
      return writer.op("stablehlo.transpose", operands, node.dtype, node.shape,
                       "permutation = " + i64_array(node.attr<TransposeAttrs>().perm));
    case OpKind::slice: {
      const SliceAttrs& attrs = node.attr<SliceAttrs>();
      return writer.op("stablehlo.slice", operands, node.dtype, node.shape,
                       "start_indices = " + i64_array(attrs.start) + ", limit_indices = " +
                           i64_array(attrs.limit) + ", strides = " + i64_array(attrs.stride));
    }
    case OpKind::concat:
      return writer.op("stablehlo.concatenate", operands, node.dtype, node.shape,
                       "dimension = " + std::to_string(node.attr<ConcatAttrs>().axis) + " : i64");
    case OpKind::pad:
      return pad(writer, node, operands[0]);
    case OpKind::reduce_sum:
      return reduce(writer, node, operands[0], true);
    case OpKind::reduce_max:
      return reduce(writer, node, operands[0], false);
    case OpKind::dot_general:
      return dot_general(writer, node, operands[0], operands[1]);
    case OpKind::gather:
      return gather(writer, node, operands[0], operands[1]);
    case OpKind::scatter_add:
      return scatter_add(writer, node, operands[0], operands[1], operands[2]);
    case OpKind::all_reduce:
      return all_reduce(writer, node, operands[0], replicas);
    default:
      fail("stablehlo", "no lowering for op ", op_name(node.op),
           " (composites must be decomposed first; inputs are arguments)");
  }
}

}  // namespace kiln::pjrt
