// safetensors reading: header parsing and validation over a byte buffer, and the mapped file.
#include "kiln/io/safetensors.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>

#include "kiln/io/json_util.h"
#include "kiln/io/safetensors_dtypes.h"

namespace kiln {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; Kiln maps it without swapping bytes");

namespace {

using Json = nlohmann::ordered_json;

// Hugging Face's reader refuses larger headers too; it guards against absurd allocations.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Tensor info straight from the header, before the offsets are checked against each other.
struct Entry {
  SafetensorsView view;
  uint64_t begin = 0;
  uint64_t end = 0;
};

uint64_t read_u64_le(const std::byte* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | std::to_integer<uint64_t>(p[i]);
  return value;
}

// A JSON number that is a non-negative integer (nlohmann keeps 3.0 and 1e3 as floats: rejected).
std::optional<uint64_t> as_count(const Json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) return value.get<uint64_t>();
  return std::nullopt;
}

std::string offsets_str(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

Entry parse_entry(const std::string& name, const Json& info, std::string_view where) {
  auto bad = [&](const auto&... parts) { fail(where, "tensor '", name, "': ", parts...); };
  if (!info.is_object()) bad("header entry is a JSON ", info.type_name(), ", not an object");
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!info.contains(key)) bad("header entry has no \"", key, "\"");
  }
  Entry entry;
  entry.view.name = name;

  const Json& dtype = info["dtype"];
  if (!dtype.is_string()) bad("\"dtype\" is a JSON ", dtype.type_name(), ", not a string");
  entry.view.dtype_tag = dtype.get<std::string>();
  const SafetensorsDType* type = safetensors_dtype_find(entry.view.dtype_tag);
  if (type == nullptr) {
    bad("unknown dtype '", entry.view.dtype_tag,
        "' (safetensors dtypes: ", safetensors_dtype_list(), ")");
  }
  entry.view.dtype = type->kiln;

  const Json& shape = info["shape"];
  if (!shape.is_array()) bad("\"shape\" is a JSON ", shape.type_name(), ", not an array");
  // numel * bits in 64 bits, and every dim within int64 (Kiln's Shape).
  uint64_t bits = type->bits;
  for (const Json& dim : shape) {
    std::optional<uint64_t> size = as_count(dim);
    if (!size) bad("shape ", shape.dump(), " has an entry that is not a non-negative integer");
    if (*size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(bits, *size, &bits)) {
      bad("shape ", shape.dump(), " overflows 64-bit sizes");
    }
    entry.view.shape.push_back(static_cast<int64_t>(*size));
  }
  if (bits % 8 != 0) {
    bad("shape ", shape_str(entry.view.shape), " of ", type->tag,
        " is not a whole number of bytes");
  }

  const Json& offsets = info["data_offsets"];
  std::optional<uint64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2) {
    begin = as_count(offsets[0]);
    end = as_count(offsets[1]);
  }
  if (!begin || !end) bad("\"data_offsets\" ", offsets.dump(), " is not two non-negative integers");
  entry.begin = *begin;
  entry.end = *end;
  if (entry.end < entry.begin)
    bad("data_offsets ", offsets_str(entry.begin, entry.end), " are reversed");
  if (entry.end - entry.begin != bits / 8) {
    bad("shape ", shape_str(entry.view.shape), " of ", type->tag, " needs ", bits / 8,
        " bytes but data_offsets ", offsets_str(entry.begin, entry.end), " hold ",
        entry.end - entry.begin);
  }
  return entry;
}

std::map<std::string, std::string> parse_metadata(const Json& value, std::string_view where) {
  if (!value.is_object())
    fail(where, "\"__metadata__\" is a JSON ", value.type_name(), ", not an object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, text] : value.items()) {
    if (!text.is_string()) {
      fail(where, "\"__metadata__\" entry '", key, "' is a JSON ", text.type_name(),
           ", not a string");
    }
    metadata[key] = text.get<std::string>();
  }
  return metadata;
}

// The header as JSON; duplicate top-level keys are an error (JSON parsers silently keep one).
Json parse_header_json(std::string_view text, std::string_view where) {
  std::set<std::string> seen;
  std::string duplicate;
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key && duplicate.empty() &&
        !seen.insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  Json header = json_parse<Json>(text, where, callback);
  if (!duplicate.empty()) fail(where, "tensor '", duplicate, "': the header lists it twice");
  if (!header.is_object()) fail(where, "header is a JSON ", header.type_name(), ", not an object");
  return header;
}

// The offsets must tile [0, data_size) exactly: no overlap, no gap, nothing past the end.
void check_layout(const std::vector<Entry>& entries, uint64_t data_size, std::string_view where) {
  for (const Entry& entry : entries) {
    if (entry.end > data_size) {
      fail(where, "tensor '", entry.view.name, "': data_offsets ",
           offsets_str(entry.begin, entry.end), " run past the end of the data region (", data_size,
           " bytes): the file is truncated");
    }
  }
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(entries[a].begin, entries[a].end) <
           std::pair(entries[b].begin, entries[b].end);
  });
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (size_t i : order) {
    const Entry& entry = entries[i];
    if (entry.begin < covered) {
      fail(where, "tensor '", entry.view.name, "': data_offsets ",
           offsets_str(entry.begin, entry.end), " overlap tensor '", previous->view.name, "' ",
           offsets_str(previous->begin, previous->end));
    }
    if (entry.begin > covered) {
      fail(where, "tensor '", entry.view.name, "': data bytes [", covered, ", ", entry.begin,
           ") before it belong to no tensor");
    }
    covered = entry.end;
    previous = &entry;
  }
  if (covered < data_size) {
    if (previous == nullptr)
      fail(where, "the header lists no tensors but ", data_size, " data bytes follow it");
    fail(where, "tensor '", previous->view.name, "': ", data_size - covered,
         " data bytes after it (the last tensor) belong to no tensor");
  }
}

}  // namespace

SafetensorsContents safetensors_parse(std::span<const std::byte> buffer, std::string_view where) {
  if (buffer.size() < 8) {
    fail(where, "file is ", buffer.size(),
         " bytes, shorter than the 8-byte header length: truncated");
  }
  uint64_t header_size = read_u64_le(buffer.data());
  if (header_size > kMaxHeaderBytes) {
    fail(where, "header length ", header_size, " is absurd (limit ", kMaxHeaderBytes,
         " bytes): not a safetensors file?");
  }
  if (header_size > buffer.size() - 8) {
    fail(where, "header length ", header_size, " runs past the end of the file (", buffer.size(),
         " bytes): truncated");
  }
  std::string_view text(reinterpret_cast<const char*>(buffer.data()) + 8, header_size);
  // nlohmann stops at a NUL byte as if the input ended there; JSON never contains one.
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    fail(where, "header byte ", nul, " is NUL: not a JSON header");
  }
  Json header = parse_header_json(text, where);
  std::span<const std::byte> data = buffer.subspan(8 + header_size);

  SafetensorsContents contents;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      contents.metadata = parse_metadata(info, where);
    } else {
      entries.push_back(parse_entry(name, info, where));
    }
  }
  check_layout(entries, data.size(), where);
  for (Entry& entry : entries) {
    entry.view.bytes = data.subspan(entry.begin, entry.end - entry.begin);
    contents.tensors.push_back(std::move(entry.view));
  }
  return contents;
}

Tensor safetensors_to_tensor(const SafetensorsView& view, std::string_view where) {
  if (!view.dtype) {
    fail(where, "tensor '", view.name, "': dtype ", view.dtype_tag,
         " is not supported by Kiln (supported: F32, F64, BF16, F16, I32, I64, U32, BOOL)");
  }
  Tensor tensor(*view.dtype, view.shape);
  if (!view.bytes.empty()) std::memcpy(tensor.data(), view.bytes.data(), view.bytes.size());
  if (*view.dtype == DType::boolean) {
    // Kiln's bool is exactly 0 or 1; any other byte would be read inconsistently by kernels.
    const auto* values = tensor.data_as<uint8_t>();
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      if (values[i] > 1) {
        fail(where, "tensor '", view.name, "': BOOL element ", i, " has byte value ",
             int{values[i]}, " (expected 0 or 1)");
      }
    }
  }
  return tensor;
}

SafetensorsFile::SafetensorsFile(std::string path)
    : file_(std::move(path)), contents_(safetensors_parse(file_.bytes(), file_.path())) {
  for (size_t i = 0; i < contents_.tensors.size(); ++i)
    index_.emplace(contents_.tensors[i].name, i);
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> names;
  names.reserve(contents_.tensors.size());
  for (const SafetensorsView& view : contents_.tensors) names.push_back(view.name);
  return names;
}

const SafetensorsView& SafetensorsFile::get(std::string_view name) const {
  auto found = index_.find(name);
  if (found == index_.end()) {
    fail(path(), "tensor '", name, "': not in the file (it has ", contents_.tensors.size(),
         " tensors", contents_.tensors.empty() ? "" : ", e.g. '",
         contents_.tensors.empty() ? "" : contents_.tensors.front().name,
         contents_.tensors.empty() ? "" : "'", ")");
  }
  return contents_.tensors[found->second];
}

Tensor SafetensorsFile::to_tensor(std::string_view name) const {
  return safetensors_to_tensor(get(name), path());
}

Tensor SafetensorsFile::to_tensor(std::string_view name, const Shape& expected) const {
  const SafetensorsView& view = get(name);
  if (view.shape != expected) {
    fail(path(), "tensor '", name, "': shape ", shape_str(view.shape),
         " does not match the expected ", shape_str(expected),
         " (does config.json fit these weights?)");
  }
  return safetensors_to_tensor(view, path());
}

}  // namespace kiln
