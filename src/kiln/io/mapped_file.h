// A read-only memory mapping of a whole file (RAII), for zero-copy reads of large weight files.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace kiln {

class MappedFile {
 public:
  // Maps `path` read-only; throws Error("[path] ...") naming the system error when it cannot.
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  // The file's bytes; empty for an empty file. Valid while this object lives.
  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  void unmap() noexcept;

  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kiln
