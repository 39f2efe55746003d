// CPU kernels of the layout ops. Each is one or more strided copies, simplified at compile time;
// reshape needs no kernel at all (its result aliases its operand's buffer).
#include <algorithm>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/strided_copy.h"
#include "kiln/backends/cpu/typed.h"

namespace kiln::cpu {
namespace {

// Copies into the whole (contiguous) result from the operand seen through `src_strides`.
Kernel gather_view(const Graph& graph, int32_t id, int64_t src_base,
                   std::vector<int64_t> src_strides) {
  const Node& node = graph.node(id);
  int32_t x = node.inputs[0];
  StridedCopy copy = simplify({node.shape, shape_strides(node.shape), std::move(src_strides), 0,
                               src_base, dtype_size(node.dtype)});
  return {[=](const Buffers& buffers, std::byte*) {
    run_copy(copy, buffers.at<std::byte>(id), buffers.at<std::byte>(x));
  }};
}

}  // namespace

// A size-1 operand dim stretches (stride 0), as do the result dims the operand does not have.
Kernel make_broadcast(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  const Shape& from = graph.node(node.inputs[0]).shape;
  const Axes& dims = node.attr<BroadcastAttrs>().dims;
  std::vector<int64_t> from_strides = shape_strides(from);
  std::vector<int64_t> strides(node.shape.size(), 0);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (from[d] != 1) strides[static_cast<size_t>(dims[d])] = from_strides[d];
  }
  return gather_view(graph, id, 0, std::move(strides));
}

Kernel make_transpose(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  std::vector<int64_t> from_strides = shape_strides(graph.node(node.inputs[0]).shape);
  std::vector<int64_t> strides;
  for (int64_t dim : node.attr<TransposeAttrs>().perm) {
    strides.push_back(from_strides[static_cast<size_t>(dim)]);
  }
  return gather_view(graph, id, 0, std::move(strides));
}

Kernel make_slice(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  const SliceAttrs& attrs = node.attr<SliceAttrs>();
  std::vector<int64_t> strides = shape_strides(graph.node(node.inputs[0]).shape);
  int64_t base = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    base += attrs.start[d] * strides[d];
    strides[d] *= attrs.stride[d];
  }
  return gather_view(graph, id, base, std::move(strides));
}

// Each part is copied into its window of the result.
Kernel make_concat(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  auto axis = static_cast<size_t>(node.attr<ConcatAttrs>().axis);
  std::vector<int64_t> out_strides = shape_strides(node.shape);
  std::vector<std::pair<int32_t, StridedCopy>> parts;
  int64_t offset = 0;
  for (int32_t part : node.inputs) {
    const Shape& shape = graph.node(part).shape;
    parts.emplace_back(part, simplify({shape, out_strides, shape_strides(shape),
                                       offset * out_strides[axis], 0, dtype_size(node.dtype)}));
    offset += shape[axis];
  }
  return {[=](const Buffers& buffers, std::byte*) {
    for (const auto& [part, copy] : parts) {
      run_copy(copy, buffers.at<std::byte>(id), buffers.at<std::byte>(part));
    }
  }};
}

// The fill value everywhere, then the operand copied into its window.
Kernel make_pad(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  const PadAttrs& attrs = node.attr<PadAttrs>();
  int32_t x = node.inputs[0];
  const Shape& shape = graph.node(x).shape;
  std::vector<int64_t> out_strides = shape_strides(node.shape);
  int64_t base = 0;
  for (size_t d = 0; d < out_strides.size(); ++d) base += attrs.low[d] * out_strides[d];
  StridedCopy copy =
      simplify({shape, out_strides, shape_strides(shape), base, 0, dtype_size(node.dtype)});
  Tensor fill = Tensor::scalar(node.dtype, attrs.value);
  int64_t n = shape_numel(node.shape);
  return visit_bytes(node.dtype, [&]<typename T>() -> Kernel {
    T value = fill.data_as<T>()[0];
    return {[=](const Buffers& buffers, std::byte*) {
      T* out = buffers.at<T>(id);
      parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        std::fill(out + begin, out + end, value);
      });
      run_copy(copy, buffers.at<std::byte>(id), buffers.at<std::byte>(x));
    }};
  });
}

}  // namespace kiln::cpu
