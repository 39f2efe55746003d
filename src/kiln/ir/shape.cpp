// Shape helpers.
#include "kiln/ir/shape.h"

#include <sstream>

#include "kiln/ir/error.h"

namespace kiln {

int64_t shape_numel(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream out;
  out << '(';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? "," : "") << shape[i];
  out << ')';
  return out.str();
}

std::vector<int64_t> shape_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* where) {
  check(axis >= -rank && axis < rank, where, "axis ", axis, " out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

}  // namespace kiln
