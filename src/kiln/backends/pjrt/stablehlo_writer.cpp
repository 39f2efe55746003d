// StableHLO text in the generic operation form (see stablehlo_writer.h).
#include "kiln/backends/pjrt/stablehlo_writer.h"

#include <cstring>

#include "kiln/ir/error.h"

namespace kiln::pjrt {
namespace {

std::string joined(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(values[i]);
  }
  return text;
}

std::string hex_bytes(const std::byte* data, size_t size) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string text = "\"0x";
  for (size_t i = 0; i < size; ++i) {
    auto byte = static_cast<unsigned>(data[i]);
    text += kDigits[byte >> 4];
    text += kDigits[byte & 15];
  }
  return text + '"';
}

// A nested literal of bools, row-major: [[true, false], [false, true]].
void bool_literal(const uint8_t* values, const Shape& shape, size_t dim, int64_t& next,
                  std::string& text) {
  if (dim == shape.size()) {
    text += values[next++] != 0 ? "true" : "false";
    return;
  }
  text += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) text += ", ";
    bool_literal(values, shape, dim + 1, next, text);
  }
  text += ']';
}

}  // namespace

std::string element_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "f16";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::u32:
      return "ui32";
    case DType::boolean:
      return "i1";
  }
  fail("stablehlo", "unknown dtype ", static_cast<int>(dtype));
}

std::string tensor_type(std::string_view element, const Shape& shape) {
  std::string text = "tensor<";
  for (int64_t dim : shape) text += std::to_string(dim) + "x";
  return text + std::string(element) + ">";
}

std::string tensor_type(const Ssa& value) { return tensor_type(value.element, value.shape); }

std::string i64_array(const std::vector<int64_t>& values) {
  return values.empty() ? "array<i64>" : "array<i64: " + joined(values) + ">";
}

std::string int_list(const std::vector<int64_t>& values) { return "[" + joined(values) + "]"; }

Ssa StableHloWriter::op(std::string_view name, const std::vector<Ssa>& operands,
                        std::string_view element, const Shape& shape, std::string_view attributes,
                        std::string_view region) {
  Ssa result{fresh(), std::string(element), shape};
  std::string text = result.name + " = \"" + std::string(name) + "\"(";
  std::string types;
  for (size_t i = 0; i < operands.size(); ++i) {
    text += (i > 0 ? ", " : "") + operands[i].name;
    types += (i > 0 ? ", " : "") + tensor_type(operands[i]);
  }
  text += ")";
  if (!region.empty()) text += " (" + std::string(region) + ")";
  if (!attributes.empty()) text += " {" + std::string(attributes) + "}";
  text += " : (" + types + ") -> " + tensor_type(result);
  line(text);
  return result;
}

Ssa StableHloWriter::op(std::string_view name, const std::vector<Ssa>& operands, DType dtype,
                        const Shape& shape, std::string_view attributes, std::string_view region) {
  return op(name, operands, element_type(dtype), shape, attributes, region);
}

Ssa StableHloWriter::same_type(std::string_view name, const std::vector<Ssa>& operands) {
  return op(name, operands, operands.at(0).element, operands.at(0).shape);
}

Ssa StableHloWriter::constant(const Tensor& value) {
  std::string element = element_type(value.dtype());
  std::string literal;
  if (value.dtype() == DType::boolean) {
    int64_t next = 0;
    bool_literal(value.data_as<uint8_t>(), value.shape(), 0, next, literal);
  } else {
    literal = hex_bytes(value.data(), value.nbytes());
  }
  std::string attribute = "value = dense<" + literal + "> : " + tensor_type(element, value.shape());
  return op("stablehlo.constant", {}, element, value.shape(), attribute);
}

Ssa StableHloWriter::splat(DType dtype, double value, const Shape& shape) {
  Tensor scalar = Tensor::scalar(dtype, value);
  std::string element = element_type(dtype);
  std::string literal = dtype == DType::boolean ? (value != 0.0 ? "true" : "false")
                                                : hex_bytes(scalar.data(), scalar.nbytes());
  return op("stablehlo.constant", {}, element, shape,
            "value = dense<" + literal + "> : " + tensor_type(element, shape));
}

Ssa StableHloWriter::splat_bits(std::string_view element, uint64_t bits, const Shape& shape) {
  std::string attribute =
      "value = dense<" + std::to_string(bits) + "> : " + tensor_type(element, shape);
  return op("stablehlo.constant", {}, element, shape, attribute);
}

Ssa StableHloWriter::convert(const Ssa& value, std::string_view element) {
  if (value.element == element) return value;
  return op("stablehlo.convert", {value}, element, value.shape);
}

Ssa StableHloWriter::reshape(const Ssa& value, const Shape& shape) {
  if (value.shape == shape) return value;
  return op("stablehlo.reshape", {value}, value.element, shape);
}

Ssa StableHloWriter::broadcast(const Ssa& value, const Shape& shape,
                               const std::vector<int64_t>& dims) {
  return op("stablehlo.broadcast_in_dim", {value}, value.element, shape,
            "broadcast_dimensions = " + i64_array(dims));
}

std::string StableHloWriter::binary_region(std::string_view combiner, std::string_view element) {
  std::string scalar = tensor_type(element, {});
  std::string a = fresh(), b = fresh(), result = fresh();
  return "{\n    ^bb0(" + a + ": " + scalar + ", " + b + ": " + scalar + "):\n      " + result +
         " = \"" + std::string(combiner) + "\"(" + a + ", " + b + ") : (" + scalar + ", " + scalar +
         ") -> " + scalar + "\n      \"stablehlo.return\"(" + result + ") : (" + scalar +
         ") -> ()\n  }";
}

Ssa StableHloWriter::nan_propagating(std::string_view name, const Ssa& a, const Ssa& b) {
  Ssa result = same_type(name, {a, b});
  for (const Ssa& operand : {b, a}) {
    Ssa is_nan = op("stablehlo.compare", {operand, operand}, "i1", operand.shape,
                    "comparison_direction = #stablehlo<comparison_direction NE>");
    result = op("stablehlo.select", {is_nan, operand, result}, result.element, result.shape);
  }
  return result;
}

std::string StableHloWriter::nan_max_region(std::string_view element) {
  std::string scalar = tensor_type(element, {});
  Ssa a{fresh(), std::string(element), {}}, b{fresh(), std::string(element), {}};
  // The body is written by this writer into a scratch text, then moved into the region.
  std::string outer = std::move(text_);
  text_.clear();
  Ssa result = nan_propagating("stablehlo.maximum", a, b);
  line("\"stablehlo.return\"(" + result.name + ") : (" + scalar + ") -> ()");
  std::string body = std::move(text_);
  text_ = std::move(outer);
  return "{\n    ^bb0(" + a.name + ": " + scalar + ", " + b.name + ": " + scalar + "):\n" + body +
         "  }";
}

std::string StableHloWriter::fresh() { return "%" + std::to_string(next_++); }

void StableHloWriter::line(std::string_view text) {
  text_ += "    ";
  text_ += text;
  text_ += '\n';
}

}  // namespace kiln::pjrt
