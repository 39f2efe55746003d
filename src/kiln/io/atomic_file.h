// Crash-safe file writing: bytes go to `path.tmp`, are fsync'd, then renamed over `path`, so a
// crash at any moment leaves either the old file or the complete new one.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace kiln {

class AtomicFileWriter {
 public:
  // Creates (or truncates a stale) `path.tmp`; throws Error("[path] ...") when it cannot.
  explicit AtomicFileWriter(std::string path);
  // Removes `path.tmp` unless commit() succeeded: an abandoned write leaves `path` untouched.
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::span<const std::byte> bytes);
  void write(std::string_view text);
  // fsync, rename over `path`, fsync the folder. The writer is finished afterwards.
  void commit();

 private:
  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
};

// The whole of `contents` written through an AtomicFileWriter.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace kiln
