// Checkpoints: atomic writing (crashes and failed writes leave earlier checkpoints intact and no
// half-written folder that counts), discovery, rotation with a best checkpoint, the resume
// decision of run_glue.py, and the optimizer/RNG state files.
#include "kiln/train/checkpoint.h"
#include "support/testing.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/io/safetensors.h"
#include "kiln/ir/error.h"
#include "kiln/train/checkpoint_state.h"
#include "kiln/train/lr_schedule.h"

namespace kiln {
namespace {

using testing::scratch_folder;

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename Body>
std::string error_of(Body body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

std::string state_json(int64_t step) { return "{\"global_step\": " + std::to_string(step) + "}\n"; }

// A checkpoint with a config and `payload_bytes` bytes of weights.
fs::path save(const fs::path& output_dir, int64_t step, int64_t payload_bytes = 16) {
  return write_checkpoint(
      output_dir, step,
      [&](const fs::path& folder) {
        write_text(folder / "config.json", "{\"step\": " + std::to_string(step) + "}");
        Tensor weights(DType::f32, {payload_bytes / 4});
        safetensors_write((folder / "model.safetensors").string(), {{"w", weights}});
      },
      state_json(step));
}

std::vector<int64_t> steps_of(const std::vector<fs::path>& paths) {
  std::vector<int64_t> steps;
  for (const fs::path& path : paths) steps.push_back(checkpoint_step(path).value_or(-1));
  return steps;
}

TEST(CheckpointTest, WritesAHuggingFaceFolderAtomically) {
  fs::path out = scratch_folder() / "out";  // created on the first save
  fs::path path = save(out, 500);
  EXPECT_EQ(path, out / "checkpoint-500");
  EXPECT_EQ(read_text(path / "trainer_state.json"), state_json(500));
  EXPECT_EQ(read_text(path / "config.json"), "{\"step\": 500}");
  EXPECT_TRUE(SafetensorsFile((path / "model.safetensors").string()).contains("w"));
  EXPECT_TRUE(is_complete_checkpoint(path));
  // Nothing else is left in output_dir: no tmp-checkpoint-500, no *.tmp file.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out)) names.push_back(entry.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"checkpoint-500"});
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path)) files.push_back(entry.path().filename());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"config.json", "model.safetensors",
                                             "trainer_state.json"}));
}

TEST(CheckpointTest, CheckpointStepParsesOnlyCheckpointNames) {
  EXPECT_EQ(checkpoint_step("out/checkpoint-12"), 12);
  EXPECT_EQ(checkpoint_step("out/checkpoint-12/"), 12);
  EXPECT_EQ(checkpoint_step("checkpoint-0"), 0);
  EXPECT_EQ(checkpoint_step("checkpoint-"), std::nullopt);
  EXPECT_EQ(checkpoint_step("checkpoint-1a"), std::nullopt);
  EXPECT_EQ(checkpoint_step("checkpoint--1"), std::nullopt);
  EXPECT_EQ(checkpoint_step("tmp-checkpoint-3"), std::nullopt);
  EXPECT_EQ(checkpoint_step("my-checkpoint-3"), std::nullopt);
}

TEST(CheckpointTest, LatestIgnoresCrashLeftoversAndSortsNumerically) {
  fs::path out = scratch_folder();
  save(out, 9);
  save(out, 10);
  // A save that crashed after writing everything, before the rename: not a checkpoint.
  fs::create_directories(out / "tmp-checkpoint-30");
  write_text(out / "tmp-checkpoint-30" / "trainer_state.json", state_json(30));
  // A folder of the right name without trainer_state.json (e.g. copied half-way): ignored.
  fs::create_directories(out / "checkpoint-40");
  write_text(out / "checkpoint-40" / "config.json", "{}");
  // A file of a checkpoint's name: ignored.
  write_text(out / "checkpoint-50", "not a folder");

  EXPECT_EQ(latest_checkpoint(out), out / "checkpoint-10");  // 10 > 9, not "9" > "10"
  EXPECT_EQ(steps_of(list_checkpoints(out)), (std::vector<int64_t>{9, 10}));
  EXPECT_EQ(latest_checkpoint(out / "missing"), std::nullopt);

  EXPECT_EQ(remove_stale_checkpoints(out), std::vector<fs::path>{out / "tmp-checkpoint-30"});
  EXPECT_FALSE(fs::exists(out / "tmp-checkpoint-30"));
  EXPECT_TRUE(fs::exists(out / "checkpoint-40"));  // not Kiln's to delete
}

TEST(CheckpointTest, AFailedWriteLeavesEarlierCheckpointsIntact) {
  fs::path out = scratch_folder();
  save(out, 10);
  std::string error = error_of([&] {
    write_checkpoint(
        out, 20,
        [&](const fs::path& folder) {
          write_text(folder / "config.json", "{}");
          fail((folder / "model.safetensors").string(), "simulated crash");
        },
        state_json(20));
  });
  EXPECT_EQ(error, "[" + (out / "checkpoint-20").string() +
                       "] checkpoint not written (earlier checkpoints are intact): [" +
                       (out / "tmp-checkpoint-20" / "model.safetensors").string() +
                       "] simulated crash");
  EXPECT_FALSE(fs::exists(out / "tmp-checkpoint-20"));
  EXPECT_FALSE(fs::exists(out / "checkpoint-20"));
  EXPECT_EQ(latest_checkpoint(out), out / "checkpoint-10");
  EXPECT_EQ(read_text(out / "checkpoint-10" / "trainer_state.json"), state_json(10));

  // A stale temporary folder of the same step (an earlier crash) does not get in the way.
  fs::create_directories(out / "tmp-checkpoint-20" / "junk");
  save(out, 20);
  EXPECT_FALSE(fs::exists(out / "checkpoint-20" / "junk"));
  EXPECT_EQ(latest_checkpoint(out), out / "checkpoint-20");
}

TEST(CheckpointTest, TrainerStateIsWrittenLastByWriteCheckpoint) {
  fs::path out = scratch_folder();
  std::string error = error_of([&] {
    write_checkpoint(
        out, 1, [&](const fs::path& folder) { write_text(folder / "trainer_state.json", "{}"); },
        state_json(1));
  });
  EXPECT_NE(error.find("must not include trainer_state.json"), std::string::npos) << error;
  EXPECT_EQ(latest_checkpoint(out), std::nullopt);
}

TEST(CheckpointTest, SavingAStepAgainReplacesTheWholeFolder) {
  fs::path out = scratch_folder();
  write_checkpoint(
      out, 5, [&](const fs::path& folder) { write_text(folder / "old_only.txt", "old"); },
      state_json(5));
  save(out, 5);
  EXPECT_FALSE(fs::exists(out / "checkpoint-5" / "old_only.txt"));
  EXPECT_TRUE(fs::exists(out / "checkpoint-5" / "model.safetensors"));
  EXPECT_FALSE(fs::exists(out / "tmp-checkpoint-5"));
}

TEST(CheckpointTest, OutputDirUnderAFileIsAClearError) {
  fs::path root = scratch_folder();
  write_text(root / "file", "x");
  fs::path out = root / "file" / "sub";
  std::string error = error_of([&] { save(out, 1); });
  EXPECT_TRUE(error.starts_with("[" + (out / "checkpoint-1").string() + "] checkpoint not written"))
      << error;
  EXPECT_NE(error.find(out.string()), std::string::npos) << error;
  EXPECT_NE(error.find("Not a directory"), std::string::npos) << error;
}

// A file-size limit makes write(2) fail with EFBIG, as a full disk makes it fail with ENOSPC:
// the same error path, without needing a small filesystem.
TEST(CheckpointTest, AFailingWriteNamesTheFileAndSystemError) {
  fs::path out = scratch_folder();
  save(out, 1);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);  // get the errno instead of the signal
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error = error_of([&] { save(out, 2, 1 << 20); });
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);

  EXPECT_NE(error.find("cannot write " + (out / "tmp-checkpoint-2" / "model.safetensors.tmp").string() +
                       ": File too large"),
            std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(out / "tmp-checkpoint-2"));
  EXPECT_EQ(latest_checkpoint(out), out / "checkpoint-1");
}

// A real full disk and a read-only filesystem: a small tmpfs, when this process may mount one
// (root in a container usually may; otherwise the test is skipped).
class SmallFilesystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_point_ = scratch_folder() / "mnt";
    fs::create_directories(mount_point_);
    if (mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=256k") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2(mount_point_.c_str(), MNT_DETACH);
  }
  fs::path mount_point_;
  bool mounted_ = false;
};

TEST_F(SmallFilesystemTest, DiskFullNamesTheFileAndKeepsThePreviousCheckpoint) {
  fs::path out = mount_point_ / "out";
  save(out, 1, 1024);
  std::string error = error_of([&] { save(out, 2, 1 << 20); });
  EXPECT_NE(error.find((out / "tmp-checkpoint-2" / "model.safetensors.tmp").string() +
                       ": No space left on device"),
            std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(out / "tmp-checkpoint-2"));
  EXPECT_EQ(latest_checkpoint(out), out / "checkpoint-1");
  EXPECT_EQ(SafetensorsFile((out / "checkpoint-1" / "model.safetensors").string()).get("w").shape,
            (Shape{256}));
}

TEST_F(SmallFilesystemTest, ReadOnlyOutputDirIsAClearError) {
  fs::path out = mount_point_ / "out";
  save(out, 1);
  ASSERT_EQ(mount("tmpfs", mount_point_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=256k"), 0)
      << std::strerror(errno);
  std::string error = error_of([&] { save(out, 2); });
  EXPECT_NE(error.find(out.string()), std::string::npos) << error;
  EXPECT_NE(error.find("Read-only file system"), std::string::npos) << error;
  EXPECT_EQ(latest_checkpoint(out), out / "checkpoint-1");
}

TEST(CheckpointTest, RotationKeepsTheBestCheckpoint) {
  fs::path out = scratch_folder();
  auto fresh = [&] {
    fs::remove_all(out);
    for (int64_t step : {10, 20, 30, 40, 50}) save(out, step);
  };
  fresh();
  EXPECT_TRUE(rotate_checkpoints(out, std::nullopt, std::nullopt).empty());
  EXPECT_TRUE(rotate_checkpoints(out, 0, std::nullopt).empty());
  EXPECT_EQ(steps_of(rotate_checkpoints(out, 3, std::nullopt)), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(steps_of(list_checkpoints(out)), (std::vector<int64_t>{30, 40, 50}));

  // HF's _sorted_checkpoints moves the best (20) to the second-newest place: [10, 30, 40, 20, 50].
  fresh();
  EXPECT_EQ(steps_of(rotate_checkpoints(out, 2, out / "checkpoint-20")),
            (std::vector<int64_t>{10, 30, 40}));
  EXPECT_EQ(steps_of(list_checkpoints(out)), (std::vector<int64_t>{20, 50}));

  // A limit of 1 keeps the best and the newest, so the run can resume.
  fresh();
  EXPECT_EQ(steps_of(rotate_checkpoints(out, 1, out / "checkpoint-20/")),
            (std::vector<int64_t>{10, 30, 40}));
  EXPECT_EQ(steps_of(list_checkpoints(out)), (std::vector<int64_t>{20, 50}));

  // The best being the newest, a limit of 1 keeps it alone.
  fresh();
  rotate_checkpoints(out, 1, out / "checkpoint-50");
  EXPECT_EQ(steps_of(list_checkpoints(out)), (std::vector<int64_t>{50}));
}

TEST(CheckpointResumeTest, FollowsRunGlue) {
  fs::path out = scratch_folder() / "out";
  TrainingArguments args;
  args.output_dir = out.string();
  args.do_train = true;
  EXPECT_EQ(checkpoint_to_resume(args), std::nullopt);  // no output_dir yet

  fs::create_directories(out / "tmp-checkpoint-7");  // a crashed first save only
  EXPECT_EQ(checkpoint_to_resume(args), std::nullopt);

  write_text(out / "notes.txt", "mine");
  EXPECT_EQ(error_of([&] { checkpoint_to_resume(args); }),
            "[--output_dir] Output directory (" + out.string() +
                ") already exists and is not empty. Use --overwrite_output_dir to overcome.");
  args.overwrite_output_dir = true;
  EXPECT_EQ(checkpoint_to_resume(args), std::nullopt);
  args.overwrite_output_dir = false;
  args.do_train = false;  // evaluation only: the folder is fine
  EXPECT_EQ(checkpoint_to_resume(args), std::nullopt);
  args.do_train = true;

  args.resume_from_checkpoint = "true";
  EXPECT_EQ(error_of([&] { checkpoint_to_resume(args); }),
            "[--resume_from_checkpoint] No valid checkpoint found in output directory (" +
                out.string() + ")");

  save(out, 4);
  save(out, 8);
  EXPECT_EQ(checkpoint_to_resume(args), out / "checkpoint-8");
  args.resume_from_checkpoint = (out / "checkpoint-4").string();
  EXPECT_EQ(checkpoint_to_resume(args), out / "checkpoint-4");
  args.resume_from_checkpoint = "false";
  EXPECT_EQ(checkpoint_to_resume(args), std::nullopt);
  args.resume_from_checkpoint.reset();
  EXPECT_EQ(checkpoint_to_resume(args), out / "checkpoint-8");  // detected, as run_glue.py does

  fs::create_directories(out / "checkpoint-9");
  args.resume_from_checkpoint = (out / "checkpoint-9").string();
  EXPECT_EQ(error_of([&] { checkpoint_to_resume(args); }),
            "[--resume_from_checkpoint] Can't find a valid checkpoint at " +
                (out / "checkpoint-9").string() + " (it has no trainer_state.json)");
  args.resume_from_checkpoint = (out / "checkpoint-99").string();
  EXPECT_EQ(error_of([&] { checkpoint_to_resume(args); }),
            "[--resume_from_checkpoint] Can't find a valid checkpoint at " +
                (out / "checkpoint-99").string());
}

TEST(CheckpointStateTest, OptimizerStateRoundTrips) {
  fs::path folder = scratch_folder();
  const std::string path = (folder / "optimizer.safetensors").string();
  OptimizerState state;
  state.step = 7;
  state.slots["bert.embeddings.LayerNorm.weight.exp_avg"] =
      Tensor::from_doubles(DType::f32, {3}, {1, 2, 3});
  state.slots["bert.embeddings.LayerNorm.weight.exp_avg_sq"] =
      Tensor::from_doubles(DType::f32, {3}, {0.5, 0.25, 0.125});
  state.slots["classifier.bias.exp_avg"] = Tensor::from_doubles(DType::f32, {2}, {-1, 1});
  state.slots["classifier.bias.exp_avg_sq"] = Tensor::from_doubles(DType::f32, {2}, {4, 5});
  optimizer_state_write(path, state);

  OptimizerState back = optimizer_state_read(path);
  EXPECT_EQ(back.step, 7);
  EXPECT_EQ(back.optimizer, "adamw");
  ASSERT_EQ(back.slots.size(), 4u);
  EXPECT_EQ(back.slots.at("bert.embeddings.LayerNorm.weight.exp_avg").to_doubles(),
            (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(back.slots.at("bert.embeddings.LayerNorm.weight.exp_avg_sq").to_doubles(),
            (std::vector<double>{0.5, 0.25, 0.125}));
  EXPECT_EQ(back.slots.at("classifier.bias.exp_avg_sq").to_doubles(), (std::vector<double>{4, 5}));
  SafetensorsFile file(path);
  EXPECT_TRUE(file.contains("classifier.bias.exp_avg_sq"));
  EXPECT_EQ(file.metadata().at("step"), "7");
  EXPECT_EQ(file.metadata().at("optimizer"), "adamw");

  const std::unique_ptr<Optimizer> adamw = make_optimizer({});
  auto check_against = [&](const std::map<std::string, Tensor>& params) {
    return error_of([&] { optimizer_state_check(back, params, "adamw", *adamw, "resume"); });
  };
  std::map<std::string, Tensor> params = {
      {"bert.embeddings.LayerNorm.weight", Tensor(DType::f32, {3})},
      {"classifier.bias", Tensor(DType::f32, {2})}};
  EXPECT_EQ(check_against(params), "");
  EXPECT_EQ(error_of([&] {
              optimizer_state_check(back, params, "sgd", *make_optimizer({.name = "sgd"}), "resume");
            }),
            "[resume] the optimizer state is adamw's; this run's --optim is sgd (a run resumes with "
            "the optimizer it saved)");
  params["classifier.weight"] = Tensor(DType::f32, {2, 3});
  EXPECT_EQ(check_against(params),
            "[resume] no optimizer state 'classifier.weight.exp_avg' for parameter "
            "'classifier.weight'");
  params.erase("classifier.weight");
  params["classifier.bias"] = Tensor(DType::f32, {4});
  EXPECT_EQ(check_against(params),
            "[resume] optimizer state 'classifier.bias.exp_avg' is f32(2) but parameter "
            "'classifier.bias' needs f32(4)");
  params.erase("classifier.bias");
  EXPECT_EQ(check_against(params),
            "[resume] optimizer state 'classifier.bias.exp_avg' belongs to no parameter of the "
            "model");
}

// Adafactor's factored slots are checked against the parameter's shape, row and column.
TEST(CheckpointStateTest, AdafactorStateIsCheckedByItsFactoredShapes) {
  const std::unique_ptr<Optimizer> adafactor = make_optimizer({.name = "adafactor"});
  std::map<std::string, Tensor> params = {{"w", Tensor(DType::f32, {2, 3})},
                                          {"b", Tensor(DType::f32, {3})}};
  OptimizerState state{.optimizer = "adafactor", .step = 1, .slots = {}};
  state.slots["w.exp_avg_sq_row"] = Tensor(DType::f32, {2});
  state.slots["w.exp_avg_sq_col"] = Tensor(DType::f32, {3});
  state.slots["b.exp_avg_sq"] = Tensor(DType::f32, {3});
  auto error = [&] {
    return error_of([&] { optimizer_state_check(state, params, "adafactor", *adafactor, "r"); });
  };
  EXPECT_EQ(error(), "");
  state.slots["w.exp_avg_sq_col"] = Tensor(DType::f32, {2});
  EXPECT_EQ(error(), "[r] optimizer state 'w.exp_avg_sq_col' is f32(2) but parameter 'w' needs f32(3)");
}

TEST(CheckpointStateTest, MalformedOptimizerFilesNameTheFile) {
  fs::path folder = scratch_folder();
  const std::string path = (folder / "optimizer.safetensors").string();
  Tensor t(DType::f32, {2});
  safetensors_write(path, {{"w.exp_avg", t}, {"w.exp_avg_sq", t}}, {{"step", "x"}});
  EXPECT_EQ(error_of([&] { optimizer_state_read(path); }),
            "[" + path + "] metadata 'step' is not a step count: 'x'");
  safetensors_write(path, {{"w.exp_avg", t}}, {});
  EXPECT_EQ(error_of([&] { optimizer_state_read(path); }), "[" + path + "] no 'step' in the metadata");
  // Checkpoints from before --optim carry no optimizer name: they are AdamW's.
  safetensors_write(path, {{"w.exp_avg", t}}, {{"step", "3"}});
  EXPECT_EQ(optimizer_state_read(path).optimizer, "adamw");
}

TEST(CheckpointStateTest, RngStateRoundTrips) {
  fs::path folder = scratch_folder();
  const std::string path = (folder / "rng_state.json").string();
  rng_state_write(path, RngState{.seed = 1, .data_seed = 2, .epoch = 3, .step_in_epoch = 4,
                                 .sampler_position = 32});
  RngState back = rng_state_read(path);
  EXPECT_EQ(back.seed, 1);
  EXPECT_EQ(back.data_seed, 2);
  EXPECT_EQ(back.epoch, 3);
  EXPECT_EQ(back.step_in_epoch, 4);
  EXPECT_EQ(back.sampler_position, 32);
  write_text(path, R"({"seed": 1, "data_seed": 2, "epoch": "3"})");
  EXPECT_EQ(error_of([&] { rng_state_read(path); }),
            "[" + path + "] key 'epoch': expected an integer, got \"3\"");
}

// Everything a Trainer puts in a checkpoint, read back from the latest one.
TEST(CheckpointStateTest, AFullCheckpointReadsBack) {
  fs::path out = scratch_folder();
  TrainingArguments args;
  args.output_dir = out.string();
  args.learning_rate = 3e-5;
  training_arguments_post_init(args);
  LrSchedule schedule = lr_schedule_for(args, 100);
  write_checkpoint(
      out, 12,
      [&](const fs::path& folder) {
        safetensors_write((folder / "model.safetensors").string(),
                          {{"classifier.bias", Tensor(DType::f32, {2})}});
        OptimizerState optimizer;
        optimizer.step = 12;
        optimizer.slots["classifier.bias.exp_avg"] = Tensor(DType::f32, {2});
        optimizer.slots["classifier.bias.exp_avg_sq"] = Tensor(DType::f32, {2});
        optimizer_state_write((folder / kOptimizerName).string(), optimizer);
        lr_schedule_write_state((folder / kSchedulerName).string(), {schedule, 12});
        rng_state_write((folder / kRngStateName).string(), RngState{.epoch = 1, .step_in_epoch = 2});
        training_arguments_write_json((folder / kTrainingArgsName).string(), args);
      },
      state_json(12));

  fs::path latest = latest_checkpoint(out).value();
  EXPECT_EQ(optimizer_state_read((latest / kOptimizerName).string()).step, 12);
  EXPECT_EQ(lr_schedule_read_state((latest / kSchedulerName).string()).last_epoch, 12);
  EXPECT_EQ(rng_state_read((latest / kRngStateName).string()).step_in_epoch, 2);
  TrainingArguments back;
  training_arguments_load_json(back, (latest / kTrainingArgsName).string());
  EXPECT_EQ(back.learning_rate, 3e-5);
}

}  // namespace
}  // namespace kiln
