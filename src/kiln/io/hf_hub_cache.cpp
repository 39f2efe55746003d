#include "kiln/io/hf_hub_cache.h"

#include <cstdlib>
#include <fstream>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// The variable's value, or empty when it is unset or empty.
std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

bool hub_name_part(std::string_view part) {
  if (part.empty() || part == "." || part == "..") return false;
  for (char c : part) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!allowed) return false;
  }
  return true;
}

// The commit `revision` names in the model's cache folder: refs/<revision>'s content, or the
// revision itself (a commit hash, or a branch never resolved here).
std::string commit_of(const fs::path& model_cache, const std::string& revision) {
  std::ifstream ref(model_cache / "refs" / revision);
  std::string commit;
  if (ref && std::getline(ref, commit) && !commit.empty()) return commit;
  return revision;
}

}  // namespace

fs::path hf_hub_cache_folder() {
  if (std::string hub = environment("HF_HUB_CACHE"); !hub.empty()) return hub;
  if (std::string legacy = environment("HUGGINGFACE_HUB_CACHE"); !legacy.empty()) return legacy;
  if (std::string home = environment("HF_HOME"); !home.empty()) return fs::path(home) / "hub";
  if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty()) {
    return fs::path(xdg) / "huggingface" / "hub";
  }
  return fs::path(environment("HOME")) / ".cache" / "huggingface" / "hub";
}

bool looks_like_hub_id(const std::string& name) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return hub_name_part(name);
  return hub_name_part(std::string_view(name).substr(0, slash)) &&
         hub_name_part(std::string_view(name).substr(slash + 1));
}

std::string resolve_model_folder(const std::string& name_or_path, const char* flag,
                                 const std::string& revision, const fs::path& cache) {
  if (fs::exists(name_or_path)) return name_or_path;
  check(looks_like_hub_id(name_or_path), flag, "no such file or folder: ", name_or_path);
  const fs::path root = cache.empty() ? hf_hub_cache_folder() : cache;
  // models--org--name: each '/' of the id becomes "--".
  std::string folder_name = "models--";
  for (char c : name_or_path) folder_name += c == '/' ? std::string("--") : std::string(1, c);
  const fs::path model_cache = root / folder_name;
  check(fs::is_directory(model_cache), flag, "'", name_or_path,
        "' is neither a local folder nor a model in the Hugging Face cache (no ",
        model_cache.string(),
        "). Kiln does not download: fetch it where there is internet (`huggingface-cli download ",
        name_or_path, "`, or any transformers from_pretrained) and copy the cache, set HF_HOME or "
        "HF_HUB_CACHE to where it is, or give the model's folder");
  const fs::path snapshot = model_cache / "snapshots" / commit_of(model_cache, revision);
  check(fs::is_directory(snapshot), flag, "the Hugging Face cache has '", name_or_path,
        "' but not its revision '", revision, "' (no ", snapshot.string(), ")");
  return snapshot.string();
}

}  // namespace kiln
