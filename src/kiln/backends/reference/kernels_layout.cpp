// Reference kernels of the layout ops: broadcast, reshape, transpose, slice, concat, pad. They move
// whole elements as bytes, so every dtype is handled exactly.
#include <cstring>

#include "kiln/backends/reference/kernel_util.h"
#include "kiln/backends/reference/kernels.h"

namespace kiln::reference {

Tensor kernel_broadcast(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const Axes& dims = node.attr<BroadcastAttrs>().dims;
  std::vector<int64_t> x_strides = shape_strides(x.shape());
  Tensor out(node.dtype, node.shape);
  std::vector<int64_t> index(node.shape.size(), 0);
  for (int64_t i = 0; i < out.numel(); ++i, next_index(index, node.shape)) {
    int64_t source = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      // A size-1 operand dim stretches: it is always read at index 0.
      if (x.shape()[d] != 1) source += index[static_cast<size_t>(dims[d])] * x_strides[d];
    }
    copy_element(out, i, x, source);
  }
  return out;
}

Tensor kernel_reshape(const Node& node, Operands operands) {
  Tensor out(node.dtype, node.shape);
  if (out.nbytes()) std::memcpy(out.data(), operands[0].data(), out.nbytes());
  return out;
}

Tensor kernel_transpose(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const Axes& perm = node.attr<TransposeAttrs>().perm;
  std::vector<int64_t> x_strides = shape_strides(x.shape());
  Tensor out(node.dtype, node.shape);
  std::vector<int64_t> index(node.shape.size(), 0);
  for (int64_t i = 0; i < out.numel(); ++i, next_index(index, node.shape)) {
    int64_t source = 0;
    for (size_t d = 0; d < perm.size(); ++d) {
      source += index[d] * x_strides[static_cast<size_t>(perm[d])];
    }
    copy_element(out, i, x, source);
  }
  return out;
}

Tensor kernel_slice(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const SliceAttrs& attrs = node.attr<SliceAttrs>();
  std::vector<int64_t> x_strides = shape_strides(x.shape());
  Tensor out(node.dtype, node.shape);
  std::vector<int64_t> index(node.shape.size(), 0);
  for (int64_t i = 0; i < out.numel(); ++i, next_index(index, node.shape)) {
    int64_t source = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      source += (attrs.start[d] + index[d] * attrs.stride[d]) * x_strides[d];
    }
    copy_element(out, i, x, source);
  }
  return out;
}

// Each part contributes, for every index of the dims before the axis, one contiguous block.
Tensor kernel_concat(const Node& node, Operands operands) {
  auto axis = static_cast<size_t>(node.attr<ConcatAttrs>().axis);
  Tensor out(node.dtype, node.shape);
  size_t element = dtype_size(node.dtype);
  int64_t outer = dims_product(node.shape, 0, axis);
  int64_t out_block = dims_product(node.shape, axis, node.shape.size());
  int64_t offset = 0;  // of the current part inside an output block
  for (const Tensor& part : operands) {
    int64_t block = dims_product(part.shape(), axis, part.shape().size());
    for (int64_t o = 0; block > 0 && o < outer; ++o) {
      std::memcpy(out.data() + static_cast<size_t>(o * out_block + offset) * element,
                  part.data() + static_cast<size_t>(o * block) * element,
                  static_cast<size_t>(block) * element);
    }
    offset += block;
  }
  return out;
}

Tensor kernel_pad(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const PadAttrs& attrs = node.attr<PadAttrs>();
  Tensor fill = Tensor::scalar(node.dtype, attrs.value);
  Tensor out(node.dtype, node.shape);
  for (int64_t i = 0; i < out.numel(); ++i) copy_element(out, i, fill, 0);
  std::vector<int64_t> out_strides = shape_strides(node.shape);
  std::vector<int64_t> index(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, next_index(index, x.shape())) {
    int64_t target = 0;
    for (size_t d = 0; d < index.size(); ++d) target += (attrs.low[d] + index[d]) * out_strides[d];
    copy_element(out, target, x, i);
  }
  return out;
}

}  // namespace kiln::reference
