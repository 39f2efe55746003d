// AtomicFileWriter: write to a temporary sibling, sync, rename, sync the folder.
#include "kiln/io/atomic_file.h"

#include "kiln/io/atomic_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "kiln/ir/error.h"

namespace kiln {

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmp_path_(path_ + ".tmp") {
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, "cannot create ", tmp_path_, ": ", std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
  }
}

void AtomicFileWriter::write(std::span<const std::byte> bytes) {
  check(fd_ >= 0, path_, "write after commit");
  const std::byte* next = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t written = ::write(fd_, next, left);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) fail(path_, "cannot write ", tmp_path_, ": ", std::strerror(errno));
    next += written;
    left -= static_cast<size_t>(written);
  }
}

void AtomicFileWriter::write(std::string_view text) {
  write(std::as_bytes(std::span<const char>(text.data(), text.size())));
}

void AtomicFileWriter::commit() {
  check(fd_ >= 0, path_, "commit twice");
  if (::fsync(fd_) != 0) fail(path_, "cannot sync ", tmp_path_, ": ", std::strerror(errno));
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(tmp_path_.c_str());
    fail(path_, "cannot close ", tmp_path_, ": ", std::strerror(saved));
  }
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    int saved = errno;
    ::unlink(tmp_path_.c_str());
    fail(path_, "cannot rename ", tmp_path_, " over it: ", std::strerror(saved));
  }
  // The rename itself is durable only once the folder's entry is synced.
  std::filesystem::path folder = std::filesystem::path(path_).parent_path();
  sync_directory(folder.empty() ? std::filesystem::path(".") : folder);
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFileWriter writer(path);
  writer.write(contents);
  writer.commit();
}

}  // namespace kiln
