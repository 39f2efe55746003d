// Internal helpers shared by the ops_<family>.cpp builder files: operand checks, type strings
// and numpy broadcasting by explicit broadcast nodes. Not part of the public API.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::detail {

// "f32(4,3)", as the dump prints a node's type.
std::string type_str(DType dtype, const Shape& shape);
std::string type_str(const Value& x);
// "[0,2]"
std::string list_str(const std::vector<int64_t>& values);

// Throws "[where] operand i is an empty Value" or "[where] operands belong to different graphs".
void check_operands(const std::vector<Value>& operands, std::string_view where);
// Throws "[where] negative dim in (2,-1)".
void check_dims(const Shape& shape, std::string_view where);
// Throws "[where] dtype mismatch: f32 vs i32".
void check_same_dtype(const Value& a, const Value& b, std::string_view where);
// Throws "[where] needs a floating dtype, got i32".
void check_floating(const Value& x, std::string_view where);
// Throws "[where] needs a numeric dtype, got bool".
void check_numeric(const Value& x, std::string_view where);
// The offset of random bits of `shape`: an i64 scalar, or an i64 vector of shape[0] keys (one per
// leading row); throws "[where] offset ... got i64(3)" otherwise.
void check_random_offset(const Value& offset, const Shape& shape, std::string_view where);

// The numpy broadcast of the shapes (dims aligned from the right, size 1 stretches); throws
// "[where] cannot broadcast (4,3) with (5,3)".
Shape broadcast_shapes(const std::vector<Shape>& shapes, std::string_view where);
// Every operand broadcast to the common shape with explicit broadcast nodes (operands that
// already have it are returned as they are).
std::vector<Value> broadcast_operands(const std::vector<Value>& operands, std::string_view where);

}  // namespace kiln::detail
