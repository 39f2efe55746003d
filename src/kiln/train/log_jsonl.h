// The JSONL training log: one JSON object per Trainer.log call (the log_history entry, with its
// "epoch" and "step"), one line each, flushed as it is written.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace kiln {

class JsonlLogWriter {
 public:
  // Opens `path` for writing; `append` keeps earlier lines (a resumed run), otherwise the file
  // is truncated. Throws Error naming the path when it cannot.
  JsonlLogWriter(const std::string& path, bool append);
  ~JsonlLogWriter();
  JsonlLogWriter(const JsonlLogWriter&) = delete;
  JsonlLogWriter& operator=(const JsonlLogWriter&) = delete;

  // Writes json.dumps(entry, sort_keys=True) and a newline, then flushes.
  void write(const nlohmann::json& entry);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace kiln
