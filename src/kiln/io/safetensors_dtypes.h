// The safetensors dtype table (internal to the reader and writer of kiln/io/safetensors.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/ir/dtype.h"

namespace kiln {

struct SafetensorsDType {
  std::string_view tag;       // as in the header: "F32"
  int bits;                   // per element; F4 and F6 pack several elements in a byte
  std::optional<DType> kiln;  // empty where Kiln has no such dtype
  int rank;                   // position in the Rust library's enum: its write order key
};

// nullptr for a string that is no safetensors dtype.
const SafetensorsDType* safetensors_dtype_find(std::string_view tag);
// The entry for a Kiln dtype (every Kiln dtype has one).
const SafetensorsDType& safetensors_dtype_of(DType dtype);
// "BOOL, F4, ..." for error messages.
std::string safetensors_dtype_list();

}  // namespace kiln
