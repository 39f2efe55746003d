// Data parallel across processes end to end: `mpirun -np 2 kiln train` with half the per-device
// batch logs the same losses and gradient norms, evaluates alike and ends with the same weights
// as one process with the whole batch (fp32, dropout on, relative 1e-5), for classification,
// masked LM (whose loss is the mean over the masked tokens of both processes) and question
// answering, with and without gradient accumulation; only the main process writes the output
// folder.
#include <gtest/gtest.h>

#include <cmath>

#include "cli_test_util.h"
#include "mpi_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// The per-step losses and gradient norms, the eval metrics, the final weights.
struct Run {
  std::vector<double> losses, grad_norms;
  nlohmann::json eval;
  TensorMap weights;
};

Run read_run(const fs::path& out) {
  Run run;
  const nlohmann::json state = nlohmann::json::parse(testing::read_text(out / "trainer_state.json"));
  for (const nlohmann::json& entry : state["log_history"]) {
    if (entry.contains("loss")) run.losses.push_back(entry["loss"].get<double>());
    if (entry.contains("grad_norm")) run.grad_norms.push_back(entry["grad_norm"].get<double>());
  }
  run.eval = nlohmann::json::parse(testing::read_text(out / "eval_results.json"));
  run.weights = testing::read_weights(out / "model.safetensors");
  return run;
}

void expect_same_run(const Run& two, const Run& one, double weight_atol) {
  ASSERT_EQ(two.losses.size(), one.losses.size());
  ASSERT_GT(one.losses.size(), 3u);
  for (size_t i = 0; i < one.losses.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i + 1));
    EXPECT_NEAR(two.losses[i], one.losses[i], 1e-5 * std::abs(one.losses[i]));
    EXPECT_NEAR(two.grad_norms[i], one.grad_norms[i], 1e-5 * one.grad_norms[i]);
  }
  // Every evaluation metric (not its timings): the loss, accuracy, F1 or SQuAD's scores.
  for (const auto& [key, value] : one.eval.items()) {
    if (!value.is_number() || key.find("runtime") != std::string::npos ||
        key.find("per_second") != std::string::npos) {
      continue;
    }
    SCOPED_TRACE(key);
    ASSERT_TRUE(two.eval.contains(key));
    EXPECT_NEAR(two.eval[key].get<double>(), value.get<double>(),
                1e-5 * std::abs(value.get<double>()));
  }
  for (const auto& [name, value] : one.weights) {
    SCOPED_TRACE(name);
    EXPECT_ALLCLOSE(two.weights.at(name), value, 1e-5, weight_atol);
  }
}

struct Case {
  std::string task_flags;  // the task and its data
  int64_t batch = 8;       // the global batch of a micro-step
  int64_t accumulation = 1;
  // What a final weight may differ by. Some parameters of the QA head have a gradient that is
  // zero in exact arithmetic (qa_outputs.bias: a softmax does not change when every logit
  // moves alike), so theirs is rounding noise, which AdamW scales up to steps of about the
  // learning rate (1e-2) of either sign, whatever the order of the sums. A tenth of a step still
  // catches a wrong or sign-flipped gradient; the logged gradient norms catch a wrong scale.
  double weight_atol = 1e-6;
};

// The run of `c` (its data in `dir`) in one process and in two, with dropout, clipping and an
// evaluation each epoch.
void compare(const fs::path& dir, const Case& c) {
  const std::string model = testing::write_tiny_model_files(dir / "model", /*dropout=*/0.1);
  auto flags = [&](int processes, const fs::path& out) {
    return "train " + c.task_flags + " " + model + " --output_dir " + out.string() +
           " --per_device_train_batch_size " + std::to_string(c.batch / processes) +
           " --gradient_accumulation_steps " + std::to_string(c.accumulation) +
           " --per_device_eval_batch_size 4 --num_train_epochs 2 --learning_rate 1e-2"
           " --max_grad_norm 0.5 --weight_decay 0.01 --warmup_steps 2 --logging_steps 1"
           " --eval_strategy epoch --do_eval --save_strategy no --report_to none"
           " --disable_tqdm --seed 5 --device cpu";
  };
  testing::CommandResult one = testing::run_command("OMP_NUM_THREADS=1 " + std::string(KILN_BINARY) +
                                                    " " + flags(1, dir / "one"));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  testing::CommandResult two =
      testing::run_command(testing::mpirun(2) + " " + KILN_BINARY + " " + flags(2, dir / "two"));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("in each of 2 processes"), std::string::npos) << two.output;
  EXPECT_NE(two.output.find("all-reduce over 2 processes"), std::string::npos) << two.output;
  // The main process alone speaks: the end-of-run line once.
  const std::string done = "Training completed.";
  EXPECT_EQ(two.output.find(done), two.output.rfind(done)) << two.output;
  expect_same_run(read_run(dir / "two"), read_run(dir / "one"), c.weight_atol);
}

std::string classification_data(const fs::path& dir) {
  fs::create_directories(dir);
  fs::path train = testing::write_sentiment_tsv(dir / "train.tsv", 44, 11);
  fs::path eval = testing::write_sentiment_tsv(dir / "eval.tsv", 14, 12);
  return "--train_file " + train.string() + " --validation_file " + eval.string() +
         " --no_header --column_names label,source,text --max_seq_length 16";
}

std::string mlm_data(const fs::path& dir) {
  fs::create_directories(dir);
  return "--task mlm --train_file " + testing::write_text_corpus(dir, 60).string() +
         " --validation_split_percentage 20 --max_seq_length 8";
}

std::string qa_data(const fs::path& dir) {
  fs::create_directories(dir);
  const std::string questions = testing::write_questions(dir).string();
  return "--task qa --version_2_with_negative --train_file " + questions + " --validation_file " +
         questions + " --max_seq_length 32 --doc_stride 8";
}

TEST(CliMpi, TwoProcessesClassifyAsOne) {
  KILN_REQUIRE_MPIRUN();
  const fs::path dir = testing::scratch_folder();
  compare(dir, {classification_data(dir), 8, 1});
}

TEST(CliMpi, TwoProcessesClassifyAsOneWithGradientAccumulation) {
  KILN_REQUIRE_MPIRUN();
  const fs::path dir = testing::scratch_folder();
  compare(dir, {classification_data(dir), 4, 2});
}

TEST(CliMpi, TwoProcessesTrainMaskedLmAsOne) {
  KILN_REQUIRE_MPIRUN();
  const fs::path dir = testing::scratch_folder();
  compare(dir, {mlm_data(dir), 8, 1});
}

TEST(CliMpi, TwoProcessesAnswerQuestionsAsOne) {
  KILN_REQUIRE_MPIRUN();
  const fs::path dir = testing::scratch_folder();
  compare(dir, {qa_data(dir), 8, 1, 1e-3});
}

}  // namespace
}  // namespace kiln
