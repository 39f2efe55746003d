// The safetensors dtypes, in the order of the reference (Rust) library's enum: that order is its
// alignment order, and its writer lays out data by it (largest first), so ours must too.
#include "kiln/io/safetensors_dtypes.h"

#include <array>

#include "kiln/io/safetensors.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

constexpr std::array<SafetensorsDType, 22> kTable = {{
    {"BOOL", 8, DType::boolean, 0},       {"F4", 4, std::nullopt, 1},
    {"F6_E2M3", 6, std::nullopt, 2},      {"F6_E3M2", 6, std::nullopt, 3},
    {"U8", 8, std::nullopt, 4},           {"I8", 8, std::nullopt, 5},
    {"F8_E5M2", 8, std::nullopt, 6},      {"F8_E4M3", 8, std::nullopt, 7},
    {"F8_E8M0", 8, std::nullopt, 8},      {"F8_E4M3FNUZ", 8, std::nullopt, 9},
    {"F8_E5M2FNUZ", 8, std::nullopt, 10}, {"I16", 16, std::nullopt, 11},
    {"U16", 16, std::nullopt, 12},        {"F16", 16, DType::f16, 13},
    {"BF16", 16, DType::bf16, 14},        {"I32", 32, DType::i32, 15},
    {"U32", 32, DType::u32, 16},          {"F32", 32, DType::f32, 17},
    {"C64", 64, std::nullopt, 18},        {"F64", 64, DType::f64, 19},
    {"I64", 64, DType::i64, 20},          {"U64", 64, std::nullopt, 21},
}};

}  // namespace

const SafetensorsDType* safetensors_dtype_find(std::string_view tag) {
  for (const SafetensorsDType& entry : kTable) {
    if (entry.tag == tag) return &entry;
  }
  return nullptr;
}

const SafetensorsDType& safetensors_dtype_of(DType dtype) {
  for (const SafetensorsDType& entry : kTable) {
    if (entry.kiln == dtype) return entry;
  }
  fail("safetensors", "no safetensors dtype for ", dtype_name(dtype));
}

std::string safetensors_dtype_list() {
  std::string list;
  for (const SafetensorsDType& entry : kTable) {
    if (!list.empty()) list += ", ";
    list += entry.tag;
  }
  return list;
}

std::string_view safetensors_dtype_tag(DType dtype) { return safetensors_dtype_of(dtype).tag; }

}  // namespace kiln
