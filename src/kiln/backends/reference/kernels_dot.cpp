// Reference kernel of dot_general: for each output element, a sum over the contracting dims,
// accumulated in double (floating operands) or wrapping int64 (integer operands).
#include <algorithm>

#include "kiln/backends/reference/kernel_util.h"
#include "kiln/backends/reference/kernels.h"

namespace kiln::reference {
namespace {

// The dims of an operand that are neither batch nor contracting, in operand order.
Axes free_dims(size_t rank, const Axes& batch, const Axes& contract) {
  Axes free;
  for (size_t d = 0; d < rank; ++d) {
    auto dim = static_cast<int64_t>(d);
    bool used = std::find(batch.begin(), batch.end(), dim) != batch.end() ||
                std::find(contract.begin(), contract.end(), dim) != contract.end();
    if (!used) free.push_back(dim);
  }
  return free;
}

// Offset of the element at `index` restricted to `dims` of an operand with `strides`.
int64_t offset_of(const std::vector<int64_t>& index, size_t first, const Axes& dims,
                  const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t j = 0; j < dims.size(); ++j) {
    offset += index[first + j] * strides[static_cast<size_t>(dims[j])];
  }
  return offset;
}

}  // namespace

Tensor kernel_dot_general(const Node& node, Operands operands) {
  const Tensor& lhs = operands[0];
  const Tensor& rhs = operands[1];
  const DotAttrs& attrs = node.attr<DotAttrs>();
  bool floating = is_floating(lhs.dtype());
  if (!floating && !is_integer(lhs.dtype())) fail_dtype(node, lhs.dtype());
  Axes lhs_free = free_dims(lhs.shape().size(), attrs.lhs_batch, attrs.lhs_contract);
  Axes rhs_free = free_dims(rhs.shape().size(), attrs.rhs_batch, attrs.rhs_contract);
  std::vector<int64_t> lhs_strides = shape_strides(lhs.shape());
  std::vector<int64_t> rhs_strides = shape_strides(rhs.shape());

  // The (lhs, rhs) offsets of every point of the contracting dims, computed once.
  Shape contract_shape;
  for (int64_t dim : attrs.lhs_contract) {
    contract_shape.push_back(lhs.shape()[static_cast<size_t>(dim)]);
  }
  std::vector<std::pair<int64_t, int64_t>> contract_offsets;
  std::vector<int64_t> c(contract_shape.size(), 0);
  for (int64_t k = 0; k < shape_numel(contract_shape); ++k, next_index(c, contract_shape)) {
    contract_offsets.emplace_back(offset_of(c, 0, attrs.lhs_contract, lhs_strides),
                                  offset_of(c, 0, attrs.rhs_contract, rhs_strides));
  }

  std::vector<double> lhs_values = floating ? lhs.to_doubles() : std::vector<double>{};
  std::vector<double> rhs_values = floating ? rhs.to_doubles() : std::vector<double>{};
  Tensor out(node.dtype, node.shape);
  size_t batch = attrs.lhs_batch.size();
  std::vector<int64_t> index(node.shape.size(), 0);  // batch..., lhs free..., rhs free...
  for (int64_t i = 0; i < out.numel(); ++i, next_index(index, node.shape)) {
    int64_t lhs_base = offset_of(index, 0, attrs.lhs_batch, lhs_strides) +
                       offset_of(index, batch, lhs_free, lhs_strides);
    int64_t rhs_base = offset_of(index, 0, attrs.rhs_batch, rhs_strides) +
                       offset_of(index, batch + lhs_free.size(), rhs_free, rhs_strides);
    if (floating) {
      double acc = 0.0;
      for (auto [l, r] : contract_offsets) {
        acc += lhs_values[static_cast<size_t>(lhs_base + l)] *
               rhs_values[static_cast<size_t>(rhs_base + r)];
      }
      out.set(i, acc);
    } else {
      int64_t acc = 0;
      for (auto [l, r] : contract_offsets) {
        acc = wrap_add(acc, wrap_mul(load_int(lhs, lhs_base + l), load_int(rhs, rhs_base + r)));
      }
      store_int(out, i, acc);
    }
  }
  return out;
}

}  // namespace kiln::reference
