// Models by Hub id from the Hugging Face cache, laid out as huggingface_hub writes it
// (file_download.py: models--org--name/refs/<revision> holds a commit; snapshots/<commit>/ the
// files), and the cache folder chosen from the environment as huggingface_hub's constants.py
// chooses it.
#include <gtest/gtest.h>

#include <fstream>

#include "kiln/io/hf_hub_cache.h"
#include "support/testing.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnvironment;

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// A cache holding org/model at commit abc123 (refs main and v1) and an older commit 0ld.
fs::path fake_cache(const fs::path& dir) {
  const fs::path model = dir / "hub" / "models--org--model";
  for (const char* commit : {"abc123", "0ld"}) {
    fs::create_directories(model / "snapshots" / commit);
    write_text(model / "snapshots" / commit / "config.json", "{}");
  }
  fs::create_directories(model / "refs");
  write_text(model / "refs" / "main", "abc123");  // huggingface_hub writes no newline
  write_text(model / "refs" / "v1", "0ld\n");
  return dir / "hub";
}

TEST(HfHubCache, FindsTheSnapshotOfARevision) {
  const fs::path cache = fake_cache(testing::scratch_folder());
  const fs::path snapshots = cache / "models--org--model" / "snapshots";
  EXPECT_EQ(resolve_model_folder("org/model", "--model_name_or_path", "main", cache),
            (snapshots / "abc123").string());
  EXPECT_EQ(resolve_model_folder("org/model", "--model_name_or_path", "v1", cache),
            (snapshots / "0ld").string());
  EXPECT_EQ(resolve_model_folder("org/model", "--model_name_or_path", "0ld", cache),
            (snapshots / "0ld").string());
}

TEST(HfHubCache, ALocalPathWins) {
  const fs::path dir = testing::scratch_folder();
  const fs::path cache = fake_cache(dir);
  fs::create_directories(dir / "org" / "model");
  const fs::path old = fs::current_path();
  fs::current_path(dir);
  EXPECT_EQ(resolve_model_folder("org/model", "--model_name_or_path", "main", cache), "org/model");
  fs::current_path(old);
}

TEST(HfHubCache, SaysWhereItLookedAndHowToGetTheModel) {
  const fs::path cache = fake_cache(testing::scratch_folder());
  const std::string missing = testing::error_of(
      [&] { resolve_model_folder("org/other", "--model_name_or_path", "main", cache); });
  EXPECT_NE(missing.find("[--model_name_or_path] 'org/other' is neither a local folder nor a "
                         "model in the Hugging Face cache (no " +
                         (cache / "models--org--other").string() + ")"),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.find("huggingface-cli download org/other"), std::string::npos) << missing;
  EXPECT_EQ(testing::error_of(
                [&] { resolve_model_folder("org/model", "--model_name_or_path", "v2", cache); }),
            "[--model_name_or_path] the Hugging Face cache has 'org/model' but not its revision "
            "'v2' (no " +
                (cache / "models--org--model" / "snapshots" / "v2").string() + ")");
  // Not a Hub id: a path that does not exist.
  EXPECT_EQ(testing::error_of(
                [&] { resolve_model_folder("./a/b", "--tokenizer_name", "main", cache); }),
            "[--tokenizer_name] no such file or folder: ./a/b");
}

TEST(HfHubCache, HubIds) {
  for (const char* id : {"bert-base-uncased", "org/model", "Org_1/model.v2-x"}) {
    EXPECT_TRUE(looks_like_hub_id(id)) << id;
  }
  for (const char* path : {"", "/abs", "a/b/c", "./x", "..", "org/", "with space", "a/.."}) {
    EXPECT_FALSE(looks_like_hub_id(path)) << path;
  }
}

TEST(HfHubCache, CacheFolderFromTheEnvironmentAsHuggingfaceHub) {
  ScopedEnvironment hub("HF_HUB_CACHE", std::nullopt), legacy("HUGGINGFACE_HUB_CACHE", std::nullopt),
      home("HF_HOME", std::nullopt), xdg("XDG_CACHE_HOME", std::nullopt), user("HOME", "/u");
  EXPECT_EQ(hf_hub_cache_folder(), fs::path("/u/.cache/huggingface/hub"));
  ScopedEnvironment xdg_set("XDG_CACHE_HOME", "/x");
  EXPECT_EQ(hf_hub_cache_folder(), fs::path("/x/huggingface/hub"));
  ScopedEnvironment home_set("HF_HOME", "/h");
  EXPECT_EQ(hf_hub_cache_folder(), fs::path("/h/hub"));
  ScopedEnvironment legacy_set("HUGGINGFACE_HUB_CACHE", "/l");
  EXPECT_EQ(hf_hub_cache_folder(), fs::path("/l"));
  ScopedEnvironment hub_set("HF_HUB_CACHE", "/c");
  EXPECT_EQ(hf_hub_cache_folder(), fs::path("/c"));
}

}  // namespace
}  // namespace kiln
