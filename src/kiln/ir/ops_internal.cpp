// Operand checks, type strings and numpy broadcasting shared by the builder files.
#include "kiln/ir/ops_internal.h"

#include <algorithm>
#include <sstream>

#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"

namespace kiln::detail {

std::string type_str(DType dtype, const Shape& shape) {
  return std::string(dtype_name(dtype)) + shape_str(shape);
}

std::string type_str(const Value& x) { return type_str(x.dtype(), x.shape()); }

std::string list_str(const std::vector<int64_t>& values) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  out << ']';
  return out.str();
}

void check_operands(const std::vector<Value>& operands, std::string_view where) {
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands.size() == 1) {
      check(operands[i].valid(), where, "operand is an empty Value");
    } else {
      check(operands[i].valid(), where, "operand ", i, " is an empty Value");
    }
    check(&operands[i].graph() == &operands[0].graph(), where,
          "operands belong to different graphs");
  }
}

void check_dims(const Shape& shape, std::string_view where) {
  for (int64_t dim : shape) check(dim >= 0, where, "negative dim in ", shape_str(shape));
}

void check_same_dtype(const Value& a, const Value& b, std::string_view where) {
  check(a.dtype() == b.dtype(), where, "dtype mismatch: ", dtype_name(a.dtype()), " vs ",
        dtype_name(b.dtype()));
}

void check_floating(const Value& x, std::string_view where) {
  check(is_floating(x.dtype()), where, "needs a floating dtype, got ", dtype_name(x.dtype()));
}

void check_numeric(const Value& x, std::string_view where) {
  check(x.dtype() != DType::boolean, where, "needs a numeric dtype, got bool");
}

void check_random_offset(const Value& offset, const Shape& shape, std::string_view where) {
  if (offset.dtype() == DType::i64 && offset.rank() == 0) return;
  check(!shape.empty(), where, "offset must be an i64 scalar for a scalar result, got ",
        type_str(offset));
  check(offset.dtype() == DType::i64 && offset.rank() == 1 && offset.dim(0) == shape[0], where,
        "offset must be an i64 scalar or an i64 vector of one key per leading row (", shape[0],
        " for ", shape_str(shape), "), got ", type_str(offset));
}

Shape broadcast_shapes(const std::vector<Shape>& shapes, std::string_view where) {
  size_t rank = 0;
  for (const Shape& shape : shapes) rank = std::max(rank, shape.size());
  Shape out(rank, 1);
  for (const Shape& shape : shapes) {
    size_t offset = rank - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t& target = out[offset + i];
      if (shape[i] == target || shape[i] == 1) continue;
      if (target != 1) {
        std::ostringstream all;
        for (size_t j = 0; j < shapes.size(); ++j)
          all << (j ? " with " : "") << shape_str(shapes[j]);
        fail(where, "cannot broadcast ", all.str());
      }
      target = shape[i];
    }
  }
  return out;
}

std::vector<Value> broadcast_operands(const std::vector<Value>& operands, std::string_view where) {
  std::vector<Shape> shapes;
  for (const Value& operand : operands) shapes.push_back(operand.shape());
  Shape shape = broadcast_shapes(shapes, where);
  std::vector<Value> out;
  for (const Value& operand : operands) out.push_back(broadcast_to(operand, shape));
  return out;
}

}  // namespace kiln::detail
