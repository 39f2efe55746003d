// Checkpoint folders: atomic writing via tmp-checkpoint-N, discovery, rotation, resume choice.
#include "kiln/train/checkpoint.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>
#include <system_error>
#include <thread>

#include "kiln/io/atomic_file.h"
#include "kiln/ir/error.h"
#include "kiln/io/atomic_dir.h"
#include "kiln/train/training_arguments_fields.h"

namespace kiln {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "checkpoint-";  // HF's PREFIX_CHECKPOINT_DIR + "-"
constexpr std::string_view kTmpPrefix = "tmp-checkpoint-";

// The last component of a path, ignoring a trailing separator ("out/checkpoint-5/").
std::string last_component(const fs::path& path) {
  fs::path normal = path.lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();
  return normal.filename().string();
}

// The entries of a folder; a missing folder has none, other failures are errors.
std::vector<fs::directory_entry> entries_of(const fs::path& folder) {
  std::vector<fs::directory_entry> entries;
  std::error_code error;
  if (!fs::is_directory(folder, error)) return entries;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    entries.push_back(*it);
  }
  if (error) fail(folder.string(), "cannot list folder: ", error.message());
  return entries;
}

// The test hook of checkpoint.h: sleeps KILN_TEST_CHECKPOINT_PAUSE_MS / 2 milliseconds.
void pause_for_kill_test() {
  static const long half_ms = [] {
    const char* value = std::getenv("KILN_TEST_CHECKPOINT_PAUSE_MS");
    return value ? std::strtol(value, nullptr, 10) / 2 : 0L;
  }();
  if (half_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(half_ms));
}

}  // namespace

fs::path checkpoint_path(const fs::path& output_dir, int64_t step) {
  return output_dir / (std::string(kPrefix) + std::to_string(step));
}

std::optional<int64_t> checkpoint_step(const fs::path& folder) {
  std::string name = last_component(folder);
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size()) return std::nullopt;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  if (!std::all_of(begin, end, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  int64_t step = 0;
  if (std::from_chars(begin, end, step).ec != std::errc()) return std::nullopt;
  return step;
}

bool is_complete_checkpoint(const fs::path& folder) {
  std::error_code error;
  return fs::is_directory(folder, error) && fs::is_regular_file(folder / kTrainerStateName, error);
}

fs::path write_checkpoint(const fs::path& output_dir, int64_t step,
                          const std::function<void(const fs::path& folder)>& write_files,
                          std::string_view trainer_state_json) {
  check(step >= 0, "write_checkpoint", "negative step ", step);
  const fs::path final_path = checkpoint_path(output_dir, step);
  const fs::path tmp_path = output_dir / (std::string(kTmpPrefix) + std::to_string(step));
  try {
    make_directories(output_dir);
    remove_tree(tmp_path);  // left by a save that crashed
    make_directories(tmp_path);
    write_files(tmp_path);
    check(!fs::exists(tmp_path / kTrainerStateName), tmp_path.string(),
          "the checkpoint's files must not include ", kTrainerStateName, ", which comes last");
    pause_for_kill_test();
    write_file_atomically((tmp_path / kTrainerStateName).string(), trainer_state_json);
    sync_tree(tmp_path);
    pause_for_kill_test();
    replace_directory(tmp_path, final_path);
  } catch (const std::exception& error) {
    std::error_code ignored;
    fs::remove_all(tmp_path, ignored);
    fail(final_path.string(), "checkpoint not written (earlier checkpoints are intact): ",
         error.what());
  }
  return final_path;
}

std::vector<fs::path> list_checkpoints(const fs::path& output_dir) {
  std::vector<std::pair<int64_t, fs::path>> found;
  for (const fs::directory_entry& entry : entries_of(output_dir)) {
    std::optional<int64_t> step = checkpoint_step(entry.path());
    if (step && is_complete_checkpoint(entry.path())) found.emplace_back(*step, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (auto& [step, path] : found) paths.push_back(std::move(path));
  return paths;
}

std::optional<fs::path> latest_checkpoint(const fs::path& output_dir) {
  std::vector<fs::path> checkpoints = list_checkpoints(output_dir);
  if (checkpoints.empty()) return std::nullopt;
  return checkpoints.back();
}

std::vector<fs::path> rotate_checkpoints(const fs::path& output_dir,
                                         std::optional<int64_t> save_total_limit,
                                         const std::optional<fs::path>& best_model_checkpoint) {
  if (!save_total_limit || *save_total_limit <= 0) return {};
  std::vector<fs::path> sorted = list_checkpoints(output_dir);
  // HF's _sorted_checkpoints: bubble the best checkpoint up to the second-newest place.
  const std::string best = best_model_checkpoint ? last_component(*best_model_checkpoint) : "";
  auto is_best = [&](const fs::path& path) { return !best.empty() && path.filename() == best; };
  auto best_at = std::find_if(sorted.begin(), sorted.end(), is_best);
  if (best_at != sorted.end()) {
    for (auto i = static_cast<size_t>(best_at - sorted.begin()); i + 2 < sorted.size(); ++i) {
      std::swap(sorted[i], sorted[i + 1]);
    }
  }
  auto limit = static_cast<size_t>(*save_total_limit);
  if (sorted.size() <= limit) return {};
  // A limit of 1 would delete the newest checkpoint in favour of the best; keep both to resume.
  if (!best.empty() && limit == 1 && !is_best(sorted.back())) limit = 2;
  std::vector<fs::path> deleted(sorted.begin(), sorted.end() - static_cast<ptrdiff_t>(limit));
  for (const fs::path& path : deleted) remove_tree(path);
  return deleted;
}

std::vector<fs::path> remove_stale_checkpoints(const fs::path& output_dir) {
  std::vector<fs::path> removed;
  for (const fs::directory_entry& entry : entries_of(output_dir)) {
    if (entry.path().filename().string().starts_with(kTmpPrefix) && entry.is_directory()) {
      remove_tree(entry.path());
      removed.push_back(entry.path());
    }
  }
  return removed;
}

std::optional<fs::path> checkpoint_to_resume(const TrainingArguments& args) {
  const fs::path output_dir = args.output_dir;
  if (args.resume_from_checkpoint) {
    const std::string& value = *args.resume_from_checkpoint;
    std::error_code error;
    if (fs::is_directory(value, error)) {
      check(is_complete_checkpoint(value), "--resume_from_checkpoint",
            "Can't find a valid checkpoint at ", value, " (it has no ", kTrainerStateName, ")");
      return fs::path(value);
    }
    std::optional<bool> flag = parse_bool_word(value);
    check(flag.has_value(), "--resume_from_checkpoint", "Can't find a valid checkpoint at ", value);
    if (!*flag) return std::nullopt;
    std::optional<fs::path> latest = latest_checkpoint(output_dir);
    check(latest.has_value(), "--resume_from_checkpoint",
          "No valid checkpoint found in output directory (", args.output_dir, ")");
    return latest;
  }
  if (!args.do_train || args.overwrite_output_dir) return std::nullopt;
  std::optional<fs::path> latest = latest_checkpoint(output_dir);
  if (latest) return latest;
  // Folders of interrupted saves are Kiln's own debris, not the user's files.
  for (const fs::directory_entry& entry : entries_of(output_dir)) {
    if (!entry.path().filename().string().starts_with(kTmpPrefix)) {
      fail("--output_dir", "Output directory (", args.output_dir,
           ") already exists and is not empty. Use --overwrite_output_dir to overcome.");
    }
  }
  return std::nullopt;
}

}  // namespace kiln
