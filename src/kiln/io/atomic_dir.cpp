// Folder-level fsync and atomic replacement with POSIX calls, errors naming path and errno.
#include "kiln/io/atomic_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <vector>

#include "kiln/ir/error.h"

namespace kiln {
namespace fs = std::filesystem;
namespace {

void sync_one(const fs::path& path, bool folder) {
  int fd = ::open(path.c_str(), (folder ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) fail(path.string(), "cannot open to sync: ", std::strerror(errno));
  int synced = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (synced != 0) fail(path.string(), "cannot sync: ", std::strerror(saved));
}

fs::path parent_of(const fs::path& path) {
  fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

void make_directories(const fs::path& path) {
  // The folders still missing, innermost first: each new entry is then synced into its parent.
  std::vector<fs::path> missing;
  std::error_code error;
  for (fs::path p = path; !p.empty() && !fs::exists(p, error); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  error.clear();
  fs::create_directories(path, error);
  if (error) fail(path.string(), "cannot create folder: ", error.message());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) sync_directory(parent_of(*it));
}

void sync_directory(const fs::path& folder) { sync_one(folder, true); }

void sync_tree(const fs::path& root) {
  std::error_code error;
  for (fs::recursive_directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    fs::file_status status = it->symlink_status();
    if (fs::is_regular_file(status) || fs::is_directory(status)) {
      sync_one(it->path(), fs::is_directory(status));
    }
  }
  if (error) fail(root.string(), "cannot list folder to sync: ", error.message());
  sync_one(root, true);
}

void replace_directory(const fs::path& from, const fs::path& to) {
  const fs::path parent = parent_of(to);
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    sync_directory(parent);
    return;
  }
  int saved = errno;
  if (saved == EINVAL || saved == ENOSYS) {
    // A filesystem without renameat2 flags: a plain rename, which replaces only an empty folder.
    if (std::rename(from.c_str(), to.c_str()) != 0) {
      fail(to.string(), "cannot rename ", from.string(), " to it: ", std::strerror(errno));
    }
    sync_directory(parent);
    return;
  }
  if (saved != EEXIST) {
    fail(to.string(), "cannot rename ", from.string(), " to it: ", std::strerror(saved));
  }
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) != 0) {
    fail(to.string(), "cannot exchange it with ", from.string(), ": ", std::strerror(errno));
  }
  sync_directory(parent);
  remove_tree(from);  // now the old folder
}

void remove_tree(const fs::path& path) {
  std::error_code error;
  fs::remove_all(path, error);
  if (error) fail(path.string(), "cannot remove: ", error.message());
}

}  // namespace kiln
