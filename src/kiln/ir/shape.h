// Static shapes: a list of dimension sizes, and the helpers every layer uses on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

using Shape = std::vector<int64_t>;
using Axes = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
// "(4,3)"; a scalar prints as "()".
std::string shape_str(const Shape& shape);
// Row-major strides in elements.
std::vector<int64_t> shape_strides(const Shape& shape);
// Normalises a possibly negative axis against rank; throws Error naming `where` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* where);

}  // namespace kiln
