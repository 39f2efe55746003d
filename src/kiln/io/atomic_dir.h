// Crash-safe folders: sync a whole tree to disk, then move it into place with one rename, so a
// reader sees either the old folder or the complete new one.
#pragma once

#include <filesystem>

namespace kiln {

// mkdir -p, syncing each new folder into its parent; errors name the path and the system error.
void make_directories(const std::filesystem::path& path);

// fsync of every file and folder under `root`, then of `root` itself.
void sync_tree(const std::filesystem::path& root);

// fsync of one folder, making the renames and creations of its entries durable.
void sync_directory(const std::filesystem::path& folder);

// Moves the folder `from` to `to` atomically and syncs their parent. When `to` exists the two
// are exchanged in one step (renameat2 RENAME_EXCHANGE) and the old one is then deleted, so
// `to` names a complete folder at every moment. Both must be in the same filesystem.
void replace_directory(const std::filesystem::path& from, const std::filesystem::path& to);

// rm -rf that reports failures naming the path (a missing path is not one).
void remove_tree(const std::filesystem::path& path);

}  // namespace kiln
