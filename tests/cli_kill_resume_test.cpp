// Crash safety end to end: `kiln train` killed with SIGKILL at random moments, during steps and
// during checkpoint writes, and restarted each time, ends with the same model and trainer state
// as a run that was never killed; after every kill the latest checkpoint loads and no partial
// checkpoint is ever taken for a complete one.
//
// Design: a tiny model (dropout on, gradient accumulation, warmup, weight decay, clipping) on 48
// examples for 3 epochs = 18 updates, a checkpoint after every update. Each write is widened by
// the test hook KILN_TEST_CHECKPOINT_PAUSE_MS (checkpoint.h) to about 40 ms. Kills alternate:
// "write" kills wait until a tmp-checkpoint-N folder appears and strike within the next 40 ms
// (inside the write); "step" kills wait until a new checkpoint is complete and strike within the
// next 30 ms (mostly inside the following steps). After 12 kills the run is left to finish. The
// same command line restarts each time: without --overwrite_output_dir, `kiln train` resumes
// from the latest complete checkpoint in --output_dir.
//
// Compared bit for bit with the uninterrupted run (same backend, same seed, same output_dir, so
// that training_args.json matches too): the final model.safetensors, every file of the last
// checkpoint (model, optimizer, scheduler, RNG position, trainer_state.json with the whole
// log_history of losses, grad norms and learning rates, arguments, config, tokenizer), and the
// final output_dir/trainer_state.json except five fields of its last log_history entry (the
// train summary): train_runtime, train_samples_per_second and train_steps_per_second are wall
// clock measures, and train_loss and train_compiles cover only the updates and programs of the
// last process (HF's train_loss likewise averages the losses of the resumed part only).
#include <gtest/gtest.h>

#include <random>

#include "process_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::checkpoint_problem;
using testing::KilnProcess;
using testing::latest_step;
using testing::status_str;

constexpr int kKills = 12;
constexpr int64_t kSteps = 18;

// The model and data files, and the flags of the run (the same for every restart).
std::string run_flags(const fs::path& dir) {
  const std::string model = testing::write_tiny_model_files(dir / "model", /*dropout=*/0.1);
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 48, 11);
  return "train " + model + " --train_file " + train.string() + " --output_dir " +
         (dir / "out").string() + " --logging_dir " + (dir / "runs").string() +
         " --no_header --column_names label,source,text --max_seq_length 16"
         " --validation_split_percentage 0 --per_device_train_batch_size 4"
         " --gradient_accumulation_steps 2 --num_train_epochs 3 --learning_rate 1e-2"
         " --warmup_steps 2 --weight_decay 0.01 --max_grad_norm 0.5 --save_steps 1"
         " --logging_steps 1 --report_to none --disable_tqdm --seed 5";
}

bool has_partial_checkpoint(const fs::path& out) {
  std::error_code error;
  for (fs::directory_iterator it(out, error), end; !error && it != end; it.increment(error)) {
    if (it->path().filename().string().starts_with("tmp-checkpoint-")) return true;
  }
  return false;
}

nlohmann::json without_timing(nlohmann::json state) {
  nlohmann::json& summary = state["log_history"].back();
  for (const char* key : {"train_runtime", "train_samples_per_second", "train_steps_per_second",
                          "train_loss", "train_compiles"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
    summary.erase(key);
  }
  return state;
}

TEST(CliKillResume, SigkillAtRandomMomentsChangesNothing) {
  fs::path dir = testing::scratch_folder();
  const std::string flags = run_flags(dir);
  const fs::path out = dir / "out";

  // The uninterrupted run, moved aside so that the killed one uses the same output_dir.
  testing::CommandResult straight = testing::run_kiln(flags);
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  fs::rename(out, dir / "straight");

  std::random_device device;
  const unsigned seed = device();
  std::mt19937 rng(seed);
  SCOPED_TRACE("kill moments drawn with seed " + std::to_string(seed));
  const std::vector<std::string> pause = {"KILN_TEST_CHECKPOINT_PAUSE_MS=40"};
  int kills = 0, partial_kills = 0;
  while (true) {
    const int64_t resumed_from = latest_step(out);
    const fs::path log = dir / ("run" + std::to_string(kills) + ".log");
    KilnProcess run(flags, log, pause);
    if (kills == kKills) {
      int status = run.wait();
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << status_str(status) << ": " << testing::read_text(log);
      break;
    }
    const bool during_write = kills % 2 == 0;
    // A partial checkpoint left by the previous kill is there from the start, so a kill "during a
    // write" also waits for the restart to have resumed (slow starts, as under sanitizers).
    const std::string resume_line =
        "Continuing training from checkpoint " + checkpoint_path(out, resumed_from).string();
    auto resumed = [&] {
      return resumed_from == 0 || testing::read_text(log).find(resume_line) != std::string::npos;
    };
    bool ready = during_write
                     ? wait_until(run, [&] { return resumed() && has_partial_checkpoint(out); })
                     : wait_until(run, [&] { return latest_step(out) > resumed_from; });
    ASSERT_TRUE(ready) << "the run ended (" << status_str(run.status()) << ") before kill "
                       << kills + 1 << "; " << testing::read_text(log);
    std::uniform_int_distribution<int> delay_ms(0, during_write ? 40 : 30);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    run.signal(SIGKILL);
    int status = run.wait();
    ASSERT_TRUE(WIFSIGNALED(status)) << status_str(status) << ": " << testing::read_text(log);
    ++kills;
    partial_kills += has_partial_checkpoint(out);

    // The restart resumed from the latest complete checkpoint that was there when it started.
    if (resumed_from > 0) {
      EXPECT_NE(testing::read_text(log).find(resume_line), std::string::npos)
          << testing::read_text(log);
    }
    // Every folder named checkpoint-N is complete and loads; the partial ones are tmp-*.
    for (const fs::directory_entry& entry : fs::directory_iterator(out)) {
      if (checkpoint_step(entry.path())) {
        EXPECT_EQ(checkpoint_problem(entry.path()), "") << "after kill " << kills;
      }
    }
    EXPECT_GE(latest_step(out), resumed_from);
  }
  EXPECT_EQ(kills, kKills);
  // The pause makes nearly every "write" kill land inside a write; one is enough to have
  // tested the partial folder.
  EXPECT_GE(partial_kills, 1) << "no kill left a partial checkpoint";
  RecordProperty("kills_leaving_a_partial_checkpoint", partial_kills);

  const fs::path expected = dir / "straight";
  EXPECT_EQ(testing::read_text(out / "model.safetensors"),
            testing::read_text(expected / "model.safetensors"));
  const std::string last = "checkpoint-" + std::to_string(kSteps);
  ASSERT_EQ(latest_step(out), kSteps);
  for (const fs::directory_entry& entry : fs::directory_iterator(expected / last)) {
    SCOPED_TRACE(entry.path().filename().string());
    EXPECT_EQ(testing::read_text(out / last / entry.path().filename()),
              testing::read_text(entry.path()));
  }
  EXPECT_EQ(without_timing(nlohmann::json::parse(testing::read_text(out / "trainer_state.json"))),
            without_timing(nlohmann::json::parse(
                testing::read_text(expected / "trainer_state.json"))));
}

}  // namespace
}  // namespace kiln
