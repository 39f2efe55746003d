// Compile cache entries: reading and checking them, and writing them atomically.
//
// An entry is a magic line, a line with the sizes of the key text, the identity and the payload,
// those three byte strings, and a line with the FNV-1a checksum of everything before it. The key
// text and identity are kept to tell a file-name collision from a hit.
#include "kiln/runtime/disk_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "kiln compile cache entry 1\n";

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Writes all of `bytes` to `fd`; false (with errno set) when it cannot.
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

// `contents` into `path` through a temporary file of this process and a rename (the io layer's
// AtomicFileWriter is out of the runtime's reach; a cache needs no folder fsync).
void write_atomically(const std::string& path, std::string_view contents) {
  static std::atomic<int64_t> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0, path, "cannot create ", tmp, ": ", std::strerror(errno));
  bool written = write_all(fd, contents) && ::fsync(fd) == 0;
  int error = errno;
  written = ::close(fd) == 0 && written;
  if (written && ::rename(tmp.c_str(), path.c_str()) == 0) return;
  error = written ? errno : error;
  ::unlink(tmp.c_str());
  fail(path, "cannot write the entry: ", std::strerror(error));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), path, "cannot open: ", std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  check(!in.bad(), path, "cannot read: ", std::strerror(errno));
  return std::move(bytes).str();
}

}  // namespace

DiskCache::DiskCache(std::string folder, std::string identity)
    : folder_(std::move(folder)), identity_(std::move(identity)) {}

std::string DiskCache::path(const ProgramKey& key) const {
  return (fs::path(folder_) / (hex64(bytes_fingerprint(key.text() + "\n" + identity_)) + ".entry"))
      .string();
}

std::optional<std::string> DiskCache::load(const ProgramKey& key) const {
  const std::string file = path(key);
  std::error_code error;
  if (!fs::exists(file, error)) return std::nullopt;
  std::string entry = read_file(file);
  constexpr size_t kChecksumLine = 17;
  check(entry.size() > kMagic.size() + kChecksumLine && entry.starts_with(kMagic), file,
        "not a compile cache entry (", entry.size(), " bytes)");
  const size_t body = entry.size() - kChecksumLine;
  check(entry.substr(body) ==
            hex64(bytes_fingerprint(std::string_view(entry).substr(0, body))) + "\n",
        file, "corrupt or truncated entry (checksum mismatch)");
  const size_t newline = entry.find('\n', kMagic.size());
  check(newline < body, file, "corrupt entry (no sizes line)");
  std::istringstream sizes(entry.substr(kMagic.size(), newline - kMagic.size()));
  size_t key_size = 0, identity_size = 0, payload_size = 0;
  sizes >> key_size >> identity_size >> payload_size;
  const size_t start = newline + 1, room = body - start;
  check(!sizes.fail() && key_size <= room && identity_size <= room - key_size &&
            payload_size == room - key_size - identity_size,
        file, "corrupt entry (its sizes do not add up)");
  const std::string text = key.text();
  check(std::string_view(entry).substr(start, key_size) == text &&
            std::string_view(entry).substr(start + key_size, identity_size) == identity_,
        file, "the entry is of another program or backend (a file-name collision)");
  entry.resize(body);
  entry.erase(0, start + key_size + identity_size);
  return entry;
}

void DiskCache::store(const ProgramKey& key, std::string_view bytes) const {
  std::error_code error;
  fs::create_directories(folder_, error);
  check(!error, folder_, "cannot create the compile cache folder: ", error.message());
  const std::string text = key.text();
  std::string entry(kMagic);
  entry += std::to_string(text.size()) + " " + std::to_string(identity_.size()) + " " +
           std::to_string(bytes.size()) + "\n";
  entry += text;
  entry += identity_;
  entry += bytes;
  entry += hex64(bytes_fingerprint(entry)) + "\n";
  write_atomically(path(key), entry);
}

std::string compile_cache_folder(const std::optional<std::string>& flag) {
  if (flag) return *flag == "none" ? "" : *flag;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return (fs::path(xdg) / "kiln" / "compile").string();
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return "";
  return (fs::path(home) / ".cache" / "kiln" / "compile").string();
}

}  // namespace kiln
