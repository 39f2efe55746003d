// Values that are their operand's bytes, so that no kernel computes them: a reshape (all of the
// bytes) and a slice that takes one contiguous run of them (the fused attention gradient's dq, dk
// and dv from its [dq | dk | dv] result), unless it is a small part of a computed value (below).
// Buffer planning gives a view its root's buffer at an offset; the kernels that read a view read
// it there.
#pragma once

#include <cstdint>
#include <optional>

#include "kiln/ir/graph.h"

namespace kiln {

// A slice of a computed value is a view only when it is at least 1 / kMaxViewFraction of it.
inline constexpr int64_t kMaxViewFraction = 8;

// Where node `id`'s value starts in its operand's bytes when it is a view of them; nullopt when
// it is not a view.
std::optional<int64_t> view_offset(const Graph& graph, int32_t id);

// The node whose buffer holds `id`'s value, following views; `offset` (when given) receives the
// value's byte offset there.
int32_t view_root(const Graph& graph, int32_t id, int64_t* offset = nullptr);

// Whether `id`'s value is all of its root's bytes (a reshape, or no view at all), not a part of
// them: only such a value may take the root's buffer as an output or be overwritten in place.
bool covers_root(const Graph& graph, int32_t id);

}  // namespace kiln
