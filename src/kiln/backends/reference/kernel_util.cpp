// Shared helpers of the reference kernels.
#include "kiln/backends/reference/kernel_util.h"

#include <cstring>
#include <sstream>

#include "kiln/ir/error.h"

namespace kiln::reference {

bool next_index(std::vector<int64_t>& index, const Shape& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}

std::string index_str(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return shape_str(index);
}

int64_t load_int(const Tensor& tensor, int64_t i) {
  switch (tensor.dtype()) {
    case DType::i32:
      return tensor.data_as<int32_t>()[i];
    case DType::i64:
      return tensor.data_as<int64_t>()[i];
    case DType::u32:
      return tensor.data_as<uint32_t>()[i];
    case DType::boolean:
      return tensor.data_as<uint8_t>()[i];
    default:
      fail("reference", "load_int on ", dtype_name(tensor.dtype()));
  }
}

void store_int(Tensor& tensor, int64_t i, int64_t value) {
  switch (tensor.dtype()) {
    // Conversion to a narrower integer keeps the low bits (defined since C++20).
    case DType::i32:
      tensor.data_as<int32_t>()[i] = static_cast<int32_t>(value);
      return;
    case DType::i64:
      tensor.data_as<int64_t>()[i] = value;
      return;
    case DType::u32:
      tensor.data_as<uint32_t>()[i] = static_cast<uint32_t>(value);
      return;
    case DType::boolean:
      tensor.data_as<uint8_t>()[i] = value != 0 ? 1 : 0;
      return;
    default:
      tensor.set(i, static_cast<double>(value));
      return;
  }
}

void copy_element(Tensor& dst, int64_t dst_i, const Tensor& src, int64_t src_i) {
  size_t size = dtype_size(src.dtype());
  std::memcpy(dst.data() + static_cast<size_t>(dst_i) * size,
              src.data() + static_cast<size_t>(src_i) * size, size);
}

void fail_dtype(const Node& node, DType dtype) {
  fail(op_name(node.op), "the reference kernel does not accept ", dtype_name(dtype));
}

int64_t dims_product(const Shape& shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

}  // namespace kiln::reference
