// The compile cache on disk: one file per compiled program, named by a hash of its ProgramKey and
// the backend's cache identity, holding the backend's serialized executable, so that a resumed or
// repeated run on an XLA device loads its programs instead of compiling them again. Entries are
// written to a temporary file renamed over the entry: readers see a whole entry or none.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/runtime/program_key.h"

namespace kiln {

class DiskCache {
 public:
  // `folder` is created by the first store().
  DiskCache(std::string folder, std::string identity);

  // The file of `key`'s entry.
  std::string path(const ProgramKey& key) const;
  // The bytes stored for `key`; nullopt when there is no entry. Throws Error("[path] ...") when the
  // entry cannot be read or is not a whole entry of this key and identity (truncated, corrupt).
  std::optional<std::string> load(const ProgramKey& key) const;
  // Stores `bytes` for `key`, replacing any entry; throws Error("[path] ...") when it cannot.
  void store(const ProgramKey& key, std::string_view bytes) const;

 private:
  std::string folder_, identity_;
};

// The folder --compile_cache_dir names. Unset: $XDG_CACHE_HOME/kiln/compile, else
// ~/.cache/kiln/compile (none without HOME); "" and "none" turn the cache off (an empty result).
std::string compile_cache_folder(const std::optional<std::string>& flag);

}  // namespace kiln
