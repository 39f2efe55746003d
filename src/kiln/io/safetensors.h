// safetensors, Hugging Face's weight format: validated, memory-mapped reading with zero-copy tensor
// views, and crash-safe writing in the exact layout of the Python `safetensors` library.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/io/mapped_file.h"
#include "kiln/ir/tensor.h"

namespace kiln {

// One tensor of a safetensors buffer; `bytes` point into that buffer (little-endian, row-major).
struct SafetensorsView {
  std::string name;
  std::string dtype_tag;       // as written in the file: "F32", "BF16", "I8", ...
  std::optional<DType> dtype;  // empty for valid dtypes Kiln lacks (I8, U8, F8_E4M3, ...)
  Shape shape;
  std::span<const std::byte> bytes;
};

// A validated buffer: its tensors in header order and its "__metadata__" strings.
struct SafetensorsContents {
  std::vector<SafetensorsView> tensors;
  std::map<std::string, std::string> metadata;
};

// Parses and checks a whole safetensors buffer with the rules of Hugging Face's reader (header
// length, JSON, dtypes, shapes, offsets that tile the data region exactly), rejecting duplicate
// names too. Errors read "[where] tensor 'name': ..." (the tensor named when there is one).
// A pure function of the bytes: the entry point for fuzzing.
SafetensorsContents safetensors_parse(std::span<const std::byte> buffer, std::string_view where);

// A host-tensor copy of a view; throws naming the tensor when Kiln lacks its dtype.
Tensor safetensors_to_tensor(const SafetensorsView& view, std::string_view where);

// The safetensors dtype string of a Kiln dtype ("F32", "BF16", "BOOL", ...).
std::string_view safetensors_dtype_tag(DType dtype);

// A memory-mapped, validated .safetensors file. Views stay valid while the object lives.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(std::string path);

  const std::string& path() const { return file_.path(); }
  // Tensor names in header order (= data order for files written by either library).
  std::vector<std::string> names() const;
  bool contains(std::string_view name) const { return index_.contains(name); }
  // Throws "[path] no tensor 'name' ..." when absent.
  const SafetensorsView& get(std::string_view name) const;
  Tensor to_tensor(std::string_view name) const;
  // Same, and the tensor must have `expected` shape (the one config.json implies).
  Tensor to_tensor(std::string_view name, const Shape& expected) const;
  const std::map<std::string, std::string>& metadata() const { return contents_.metadata; }

 private:
  MappedFile file_;
  SafetensorsContents contents_;
  std::map<std::string, size_t, std::less<>> index_;
};

// Hugging Face tools (transformers) expect "format": "pt" in the metadata of model weights.
inline const std::map<std::string, std::string> kSafetensorsPtMetadata = {{"format", "pt"}};

// The file's bytes, laid out as the Python library does: data sorted by dtype alignment (largest
// first) then name, header padded with spaces to a multiple of 8 bytes.
std::vector<std::byte> safetensors_serialize(
    const std::map<std::string, Tensor>& tensors,
    const std::map<std::string, std::string>& metadata = kSafetensorsPtMetadata);

// Writes the same bytes to `path` via `path.tmp`, fsync and rename (never a half-written file).
void safetensors_write(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = kSafetensorsPtMetadata);

}  // namespace kiln
