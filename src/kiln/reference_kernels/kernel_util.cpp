// Shared helpers of the reference kernels.
#include "kiln/reference_kernels/kernel_util.h"

#include <sstream>

#include "kiln/ir/error.h"
#include "kiln/ir/philox.h"

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

void fail_dtype(const Node& node, DType dtype) {
  fail(op_name(node.op), "the reference kernel does not accept ", dtype_name(dtype));
}

int64_t dims_product(const Shape& shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

void fill_random_bits(int64_t seed, const Tensor& offset, uint32_t stream, uint32_t* bits,
                      const Shape& shape) {
  int64_t rows = offset.rank() == 0 ? 1 : shape[0];
  int64_t length = rows == 0 ? 0 : shape_numel(shape) / rows;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t row_offset = load_int(offset, r);
    uint32_t* row = bits + r * length;
    for (int64_t block = 0; block * 4 < length; ++block) {
      PhiloxCounter words =
          random_block_at(seed, row_offset, stream, static_cast<uint64_t>(block));
      for (int64_t w = 0; w < 4 && block * 4 + w < length; ++w) {
        row[block * 4 + w] = words[static_cast<size_t>(w)];
      }
    }
  }
}

}  // namespace kiln::reference
