// Writes StableHLO as MLIR text in the generic operation form ("stablehlo.add"(%a, %b) : ...),
// which every StableHLO version parses the same way: typed SSA values, constants, and the few
// composite patterns (reductions, broadcasts of scalars) that the lowering of Kiln's ops repeats.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/tensor.h"

namespace kiln::pjrt {

// A value of the module: its SSA name, MLIR element type ("f32", "ui32", "i1") and shape.
struct Ssa {
  std::string name;
  std::string element;
  Shape shape;
};

// "f32", "bf16", "i64", "ui32", "i1".
std::string element_type(DType dtype);
// "tensor<2x3xf32>", "tensor<f32>" for scalars.
std::string tensor_type(std::string_view element, const Shape& shape);
std::string tensor_type(const Ssa& value);
// "array<i64: 1, 2>"
std::string i64_array(const std::vector<int64_t>& values);
// "[1, 2]"
std::string int_list(const std::vector<int64_t>& values);

class StableHloWriter {
 public:
  // Appends `%N = "name"(operands) (region) {attributes} : (operand types) -> result type`
  // and returns the result. `region` is the text of one region (with its braces), or empty.
  Ssa op(std::string_view name, const std::vector<Ssa>& operands, std::string_view element,
         const Shape& shape, std::string_view attributes = "", std::string_view region = "");
  // The same, with the result's dtype given as a Kiln dtype.
  Ssa op(std::string_view name, const std::vector<Ssa>& operands, DType dtype, const Shape& shape,
         std::string_view attributes = "", std::string_view region = "");
  // An elementwise op whose result has the type of its first operand.
  Ssa same_type(std::string_view name, const std::vector<Ssa>& operands);

  // A constant holding `value`'s elements exactly (raw bytes; bools as a literal).
  Ssa constant(const Tensor& value);
  // `value` of `dtype`, splatted over `shape` (a scalar when shape is empty).
  Ssa splat(DType dtype, double value, const Shape& shape = {});
  // An unsigned integer splat of a type Kiln has no dtype for ("ui64").
  Ssa splat_bits(std::string_view element, uint64_t bits, const Shape& shape = {});

  Ssa convert(const Ssa& value, std::string_view element);
  Ssa reshape(const Ssa& value, const Shape& shape);
  Ssa broadcast(const Ssa& value, const Shape& shape, const std::vector<int64_t>& dims);
  // A region of one block with two scalar arguments of `element`, returning `combiner`(a, b):
  // the body of reductions and scatters.
  std::string binary_region(std::string_view combiner, std::string_view element);
  // Floating max or min that returns NaN when either operand is NaN: XLA:CPU's maximum and
  // minimum return the first operand when the second is NaN (its fast min/max default).
  Ssa nan_propagating(std::string_view name, const Ssa& a, const Ssa& b);
  // The reduction region of the same NaN-propagating max.
  std::string nan_max_region(std::string_view element);

  // A fresh SSA name.
  std::string fresh();
  // Appends a line of text as it is (indentation and newline added).
  void line(std::string_view text);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int next_ = 0;
};

}  // namespace kiln::pjrt
