// Views: reshapes, and slices of one contiguous run.
#include "kiln/compiler/views.h"

#include "kiln/ir/op.h"

namespace kiln {

std::optional<int64_t> view_offset(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  if (node.op == OpKind::reshape) return 0;
  if (node.op != OpKind::slice || shape_numel(node.shape) == 0) return std::nullopt;
  const SliceAttrs& slice = node.attr<SliceAttrs>();
  const Shape& from = graph.node(node.inputs[0]).shape;
  // Contiguous: size 1 before some dim d, any unit-stride range at d, every element after d.
  size_t d = 0;
  while (d < from.size() && node.shape[d] == 1) ++d;
  for (size_t i = d; i < from.size(); ++i) {
    bool whole = slice.start[i] == 0 && node.shape[i] == from[i];
    if (i > d && !whole) return std::nullopt;
    if (i == d && slice.stride[i] != 1 && node.shape[i] > 1) return std::nullopt;
  }
  // A view keeps all of its root's buffer alive: a small part of a computed value is copied
  // instead, so that it does not hold the rest (a layer norm's [d gamma | d beta], read by the
  // optimizer at the step's end, held its dx-sized [dx | d gamma | d beta]: BERT-base
  // --gradient_checkpointing planned 182 MiB of activations instead of 50). Arguments and
  // constants are alive throughout anyway.
  OpKind root = graph.node(view_root(graph, node.inputs[0])).op;
  if (shape_numel(node.shape) * kMaxViewFraction < shape_numel(from) && root != OpKind::input &&
      root != OpKind::constant) {
    return std::nullopt;
  }
  std::vector<int64_t> strides = shape_strides(from);
  int64_t element = 0;
  for (size_t i = 0; i < from.size(); ++i) element += slice.start[i] * strides[i];
  return element * static_cast<int64_t>(dtype_size(node.dtype));
}

int32_t view_root(const Graph& graph, int32_t id, int64_t* offset) {
  int64_t total = 0;
  while (auto step = view_offset(graph, id)) {
    total += *step;
    id = graph.node(id).inputs[0];
  }
  if (offset != nullptr) *offset = total;
  return id;
}

bool covers_root(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  const Node& root = graph.node(view_root(graph, id));
  return shape_numel(node.shape) * dtype_size(node.dtype) ==
         shape_numel(root.shape) * dtype_size(root.dtype);
}

}  // namespace kiln
