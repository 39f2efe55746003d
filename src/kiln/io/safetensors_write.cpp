// safetensors writing, byte for byte as the Python/Rust library: same data order, same compact
// JSON header, same space padding.
#include <algorithm>
#include <cstring>

#include "kiln/io/atomic_file.h"
#include "kiln/io/json_util.h"
#include "kiln/io/safetensors.h"
#include "kiln/io/safetensors_dtypes.h"

namespace kiln {
namespace {

using NamedTensor = std::pair<const std::string, Tensor>;

// The 8-byte length and the padded header, and the tensors in data order.
struct Layout {
  std::string prefix;
  std::vector<const NamedTensor*> order;
};

std::string json_string(const std::string& text, std::string_view where, std::string_view what) {
  try {
    return nlohmann::json(text).dump();
  } catch (const nlohmann::json::exception& error) {
    fail(where, what, ": ", json_error_text(error));
  }
}

Layout layout(const std::map<std::string, Tensor>& tensors,
              const std::map<std::string, std::string>& metadata, std::string_view where) {
  Layout result;
  for (const NamedTensor& named : tensors) {
    const auto& [name, tensor] = named;
    check(name != "__metadata__", where, "tensor '__metadata__': the name is reserved");
    size_t expected = static_cast<size_t>(tensor.numel()) * dtype_size(tensor.dtype());
    check(tensor.nbytes() == expected, where, "tensor '", name, "': ", tensor.nbytes(),
          " bytes of data for shape ", shape_str(tensor.shape()), " of ",
          dtype_name(tensor.dtype()));
    result.order.push_back(&named);
  }
  // Largest alignment first, then by name: the Rust library's order, so data stays aligned.
  std::stable_sort(result.order.begin(), result.order.end(), [](const auto* a, const auto* b) {
    return safetensors_dtype_of(a->second.dtype()).rank >
           safetensors_dtype_of(b->second.dtype()).rank;
  });

  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (const auto& [key, value] : metadata) {
      if (header.back() != '{') header += ',';
      header += json_string(key, where, "metadata key") + ':' +
                json_string(value, where, "metadata value of '" + key + "'");
    }
    header += '}';
  }
  size_t offset = 0;
  for (const NamedTensor* named : result.order) {
    const auto& [name, tensor] = *named;
    if (header.size() > 1) header += ',';
    header += json_string(name, where, "tensor '" + name + "'") + ":{\"dtype\":\"";
    header += safetensors_dtype_tag(tensor.dtype());
    header += "\",\"shape\":[";
    for (size_t i = 0; i < tensor.shape().size(); ++i) {
      header += (i ? "," : "") + std::to_string(tensor.shape()[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + ',' +
              std::to_string(offset + tensor.nbytes()) + "]}";
    offset += tensor.nbytes();
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');  // data starts 8-byte aligned

  uint64_t size = header.size();
  for (int i = 0; i < 8; ++i) result.prefix += static_cast<char>((size >> (8 * i)) & 0xFF);
  result.prefix += header;
  return result;
}

std::span<const std::byte> tensor_bytes(const Tensor& tensor) {
  if (tensor.nbytes() == 0) return {};
  return {tensor.data(), tensor.nbytes()};
}

}  // namespace

std::vector<std::byte> safetensors_serialize(const std::map<std::string, Tensor>& tensors,
                                             const std::map<std::string, std::string>& metadata) {
  Layout plan = layout(tensors, metadata, "safetensors");
  std::vector<std::byte> out(plan.prefix.size());
  std::memcpy(out.data(), plan.prefix.data(), plan.prefix.size());
  for (const NamedTensor* named : plan.order) {
    std::span<const std::byte> bytes = tensor_bytes(named->second);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

void safetensors_write(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  Layout plan = layout(tensors, metadata, path);
  AtomicFileWriter writer(path);
  writer.write(plan.prefix);
  for (const NamedTensor* named : plan.order) writer.write(tensor_bytes(named->second));
  writer.commit();
}

}  // namespace kiln
