// Models by their Hugging Face Hub id ("org/name"), found offline where huggingface_hub and
// transformers keep what they downloaded: <cache>/models--org--name/snapshots/<commit>/, with
// refs/<branch or tag> naming the commit. Kiln never downloads.
#pragma once

#include <filesystem>
#include <string>

namespace kiln {

// The cache folder as huggingface_hub picks it: HF_HUB_CACHE, else the legacy
// HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub.
std::filesystem::path hf_hub_cache_folder();

// Whether `name` reads as a Hub id: "name" or "org/name" of letters, digits, '-', '_' and '.',
// not "." or ".." and not a path ("./x", "/x", "a/b/c").
bool looks_like_hub_id(const std::string& name);

// The folder `name_or_path` stands for: itself when it exists; else, for a Hub id, its snapshot
// of `revision` (a branch or tag under refs/, or a commit) in `cache` (default:
// hf_hub_cache_folder()). Anything else is an Error under `flag` saying where Kiln looked and how
// to get the model there.
std::string resolve_model_folder(const std::string& name_or_path, const char* flag,
                                 const std::string& revision = "main",
                                 const std::filesystem::path& cache = {});

}  // namespace kiln
