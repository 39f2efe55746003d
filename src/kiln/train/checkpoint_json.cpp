// Reading a checkpoint's small JSON files.
#include "kiln/train/checkpoint_json.h"

#include "kiln/io/json_util.h"
#include "kiln/io/mapped_file.h"

namespace kiln {

nlohmann::json read_json_object(const std::string& path) {
  MappedFile file(path);
  auto bytes = file.bytes();
  nlohmann::json object =
      json_parse(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
  check(object.is_object(), path, "expected a JSON object, got ", object.type_name());
  return object;
}

}  // namespace kiln
