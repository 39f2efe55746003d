// Reading a sharded checkpoint through its model.safetensors.index.json.
#include "kiln/io/safetensors_shards.h"

#include <filesystem>
#include <set>
#include <string_view>

#include "kiln/io/json_util.h"
#include "kiln/io/mapped_file.h"
#include "kiln/io/safetensors.h"

namespace kiln {

std::map<std::string, Tensor> safetensors_read_sharded(const std::string& index_path) {
  MappedFile index_file(index_path);
  auto bytes = index_file.bytes();
  nlohmann::json index = json_parse(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), index_path);
  const auto weight_map = index.is_object() ? index.find("weight_map") : index.end();
  check(weight_map != index.end() && weight_map->is_object(), index_path,
        "has no \"weight_map\" object (tensor name -> shard file)");
  std::map<std::string, std::set<std::string>> shards;  // file -> the tensors listed in it
  for (const auto& [name, shard] : weight_map->items()) {
    check(shard.is_string(), index_path, "\"weight_map\" entry \"", name,
          "\" is not a file name: ", shard.dump());
    const std::string file = shard.get<std::string>();
    check(!file.empty() && file.find('/') == std::string::npos && file != "..", index_path,
          "shard \"", file, "\" is not a file beside the index");
    shards[file].insert(name);
  }
  const std::filesystem::path folder = std::filesystem::path(index_path).parent_path();
  std::map<std::string, Tensor> tensors;
  for (const auto& [file, names] : shards) {
    const std::string path = (folder / file).string();
    SafetensorsFile shard(path);
    for (const std::string& name : names) {
      check(shard.contains(name), path, "has no tensor \"", name, "\", which ", index_path,
            " puts there");
    }
    for (const std::string& name : shard.names()) {
      check(tensors.emplace(name, shard.to_tensor(name)).second, path, "tensor \"", name,
            "\" is in another shard too");
    }
  }
  return tensors;
}

}  // namespace kiln
