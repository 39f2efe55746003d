// Reference kernels of the layout ops: broadcast, reshape, transpose, slice, concat, pad. They move
// whole elements as bytes, so every dtype is handled exactly.
#include <algorithm>
#include <cstring>

#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"

namespace kiln::reference {
namespace {

// Copies elements of `from` into `to` along `shape` in row-major order: element `index` goes from
// from_base + sum index[d] * from_strides[d] to to_base + sum index[d] * to_strides[d].
void strided_copy(Tensor& to, int64_t to_base, const std::vector<int64_t>& to_strides,
                  const Tensor& from, int64_t from_base, const std::vector<int64_t>& from_strides,
                  const Shape& shape) {
  visit_bytes(to.dtype(), [&]<typename T>() {
    T* dst = to.data_as<T>() + to_base;
    const T* src = from.data_as<T>() + from_base;
    walk_rows(shape, to_strides, from_strides,
              [&](int64_t d, int64_t s, int64_t count, int64_t d_step, int64_t s_step) {
                for (int64_t j = 0; j < count; ++j) dst[d + j * d_step] = src[s + j * s_step];
              });
  });
}

// A new tensor of the node's shape whose element `index` is x's element at
// base + sum index[d] * strides[d].
Tensor gather_strided(const Node& node, const Tensor& x, int64_t base,
                      const std::vector<int64_t>& strides) {
  Tensor out(x.dtype(), node.shape);
  strided_copy(out, 0, shape_strides(node.shape), x, base, strides, node.shape);
  return out;
}

}  // namespace

// A size-1 operand dim stretches (stride 0), as do the output dims the operand does not have.
Tensor kernel_broadcast(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const Axes& dims = node.attr<BroadcastAttrs>().dims;
  std::vector<int64_t> x_strides = shape_strides(x.shape());
  std::vector<int64_t> strides(node.shape.size(), 0);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (x.shape()[d] != 1) strides[static_cast<size_t>(dims[d])] = x_strides[d];
  }
  return gather_strided(node, x, 0, strides);
}

Tensor kernel_reshape(const Node& node, Operands operands) {
  Tensor out(operands[0].dtype(), node.shape);
  if (out.nbytes()) std::memcpy(out.data(), operands[0].data(), out.nbytes());
  return out;
}

Tensor kernel_transpose(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const Axes& perm = node.attr<TransposeAttrs>().perm;
  std::vector<int64_t> x_strides = shape_strides(x.shape());
  std::vector<int64_t> strides;
  for (int64_t dim : perm) strides.push_back(x_strides[static_cast<size_t>(dim)]);
  return gather_strided(node, x, 0, strides);
}

Tensor kernel_slice(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const SliceAttrs& attrs = node.attr<SliceAttrs>();
  std::vector<int64_t> x_strides = shape_strides(x.shape());
  int64_t base = 0;
  std::vector<int64_t> strides(x_strides.size());
  for (size_t d = 0; d < strides.size(); ++d) {
    base += attrs.start[d] * x_strides[d];
    strides[d] = attrs.stride[d] * x_strides[d];
  }
  return gather_strided(node, x, base, strides);
}

// Each part contributes, for every index of the dims before the axis, one contiguous block.
Tensor kernel_concat(const Node& node, Operands operands) {
  auto axis = static_cast<size_t>(node.attr<ConcatAttrs>().axis);
  Tensor out(operands[0].dtype(), node.shape);
  size_t element = dtype_size(out.dtype());
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

// The fill value everywhere, then x copied in at offset `low`.
Tensor kernel_pad(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const PadAttrs& attrs = node.attr<PadAttrs>();
  Tensor fill = Tensor::scalar(x.dtype(), attrs.value);
  Tensor out(x.dtype(), node.shape);
  visit_bytes(out.dtype(), [&]<typename T>() {
    std::fill_n(out.data_as<T>(), out.numel(), fill.data_as<T>()[0]);
  });
  std::vector<int64_t> out_strides = shape_strides(node.shape);
  int64_t base = 0;
  for (size_t d = 0; d < out_strides.size(); ++d) base += attrs.low[d] * out_strides[d];
  strided_copy(out, base, out_strides, x, 0, shape_strides(x.shape()), x.shape());
  return out;
}

}  // namespace kiln::reference
