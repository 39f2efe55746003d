// JsonlLogWriter: Python-style one-line JSON per entry, flushed so a crash loses nothing logged.
#include "kiln/train/log_jsonl.h"

#include <cerrno>
#include <cstring>

#include "kiln/ir/error.h"
#include "kiln/train/log_python_json.h"

namespace kiln {

JsonlLogWriter::JsonlLogWriter(const std::string& path, bool append) : path_(path) {
  file_ = std::fopen(path.c_str(), append ? "ab" : "wb");
  check(file_ != nullptr, path, "cannot open log file: ", std::strerror(errno));
}

JsonlLogWriter::~JsonlLogWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void JsonlLogWriter::write(const nlohmann::json& entry) {
  check(entry.is_object(), path_, "a log entry must be a JSON object, got ", entry.type_name());
  std::string line = python_json_dumps(entry) + "\n";
  bool written = std::fwrite(line.data(), 1, line.size(), file_) == line.size();
  check(written && std::fflush(file_) == 0, path_, "cannot write log: ", std::strerror(errno));
}

}  // namespace kiln
