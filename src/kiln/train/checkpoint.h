// Checkpoint folders laid out as transformers.Trainer's (output_dir/checkpoint-N), written
// crash-safely, found, rotated, and chosen for resuming as run_glue.py and Trainer do.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "kiln/train/training_arguments.h"

namespace kiln {

// File names inside a checkpoint. HF's *.pt / *.bin files become safetensors and JSON.
inline constexpr std::string_view kTrainerStateName = "trainer_state.json";
inline constexpr std::string_view kTrainingArgsName = "training_args.json";
inline constexpr std::string_view kOptimizerName = "optimizer.safetensors";
inline constexpr std::string_view kSchedulerName = "scheduler.json";
inline constexpr std::string_view kRngStateName = "rng_state.json";

// output_dir/checkpoint-<step>.
std::filesystem::path checkpoint_path(const std::filesystem::path& output_dir, int64_t step);

// N for a path whose last component matches ^checkpoint-(\d+)$, else nullopt.
std::optional<int64_t> checkpoint_step(const std::filesystem::path& folder);

// A checkpoint counts only once its folder holds trainer_state.json, which is written last.
bool is_complete_checkpoint(const std::filesystem::path& folder);

// Writes output_dir/checkpoint-<step> so that a crash at any moment leaves either no such
// folder or a complete one, and every earlier checkpoint untouched: `write_files` fills
// output_dir/tmp-checkpoint-<step> (model, config, tokenizer, optimizer, scheduler, RNG, args),
// then `trainer_state_json` is written last, every file and folder is fsync'd, the folder is
// renamed to checkpoint-<step> (atomically replacing an older one of that step) and
// output_dir is fsync'd. On failure the temporary folder is removed and the Error names the
// checkpoint and the cause (path and system error, e.g. "No space left on device").
// Returns the checkpoint's path.
// Test hook: the environment variable KILN_TEST_CHECKPOINT_PAUSE_MS=N makes each write sleep
// N/2 ms before trainer_state.json and N/2 ms before the rename, widening the moments a kill
// leaves a partial checkpoint (tests/cli_kill_resume_test.cpp); unset, nothing waits.
std::filesystem::path write_checkpoint(
    const std::filesystem::path& output_dir, int64_t step,
    const std::function<void(const std::filesystem::path& folder)>& write_files,
    std::string_view trainer_state_json);

// The complete checkpoints of output_dir, by increasing step (none when it does not exist).
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& output_dir);

// HF's get_last_checkpoint, counting complete checkpoints only: the highest step, or nullopt.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& output_dir);

// HF's Trainer._rotate_checkpoints: with a positive limit, deletes the oldest complete
// checkpoints beyond it, never the best one (it is moved next to the newest; with a limit of 1
// and a best checkpoint that is not the newest, two are kept so the run can still resume).
// Returns the deleted folders.
std::vector<std::filesystem::path> rotate_checkpoints(
    const std::filesystem::path& output_dir, std::optional<int64_t> save_total_limit,
    const std::optional<std::filesystem::path>& best_model_checkpoint);

// Deletes the tmp-checkpoint-* folders that an interrupted save left; returns them.
std::vector<std::filesystem::path> remove_stale_checkpoints(const std::filesystem::path& output_dir);

// The checkpoint a training run continues from, as run_glue.py and Trainer.train decide:
// --resume_from_checkpoint PATH (a complete checkpoint), or true for the latest in output_dir;
// otherwise, when training into an existing output_dir without --overwrite_output_dir, the
// latest checkpoint there, and HF's error "Output directory (...) already exists and is not
// empty. Use --overwrite_output_dir to overcome." when it holds files but no checkpoint.
std::optional<std::filesystem::path> checkpoint_to_resume(const TrainingArguments& args);

}  // namespace kiln
