// --include_num_input_tokens_seen: the Trainer counts the tokens of every training batch as
// transformers 5's _track_num_input_tokens does (non_padding: the attention mask's ones; all:
// every position), over all replicas, logs it and saves it in trainer_state.json.
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/train/checkpoint.h"
#include "kiln/train/trainer_state.h"
#include "pjrt_test_util.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRows = 24;
constexpr int64_t kBatch = 4;
constexpr int64_t kMaxSeqLength = 16;

// The tokens of each row of the TSV as BertTokenizer makes them: [CLS], one per word (every word
// is in the vocabulary), [SEP]; rows are at most 9 words, so nothing is truncated.
int64_t non_padding_tokens(const fs::path& tsv) {
  std::ifstream in(tsv);
  std::string line;
  int64_t tokens = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(line.rfind('\t') + 1));
    std::string word;
    while (words >> word) ++tokens;
    tokens += 2;
  }
  return tokens;
}

TrainingArguments token_args(const fs::path& output_dir, const std::string& count) {
  TrainingArguments args = testing::tiny_args(output_dir);
  args.per_device_train_batch_size = kBatch;
  args.max_seq_length = kMaxSeqLength;
  args.pad_to_max_length = true;
  args.num_train_epochs = 2;
  args.save_strategy = SaveStrategy::epoch;
  args.include_num_input_tokens_seen = count;
  return args;
}

TEST(TrainerTokens, CountsLogsAndSavesTheTokensSeen) {
  fs::path dir = testing::scratch_folder();
  const fs::path tsv = testing::write_sentiment_tsv(dir / "train.tsv", kRows, 5);
  ClassificationDataset data = testing::load_sentiment(tsv);
  const int64_t per_epoch = non_padding_tokens(tsv);
  ASSERT_GT(per_epoch, 2 * kRows);

  testing::TinyRun run(dir / "a", token_args(dir / "a" / "out", "non_padding"));
  run.trainer->train(data, nullptr);
  EXPECT_EQ(run.trainer->state().num_input_tokens_seen, 2 * per_epoch);
  // Logged with every entry (as HF's log()), growing to the total.
  const nlohmann::json& last = run.trainer->state().log_history.back();
  EXPECT_EQ(last["num_input_tokens_seen"], 2 * per_epoch);
  // The checkpoint of epoch 1 holds the first epoch's count, and a resumed run goes on from it.
  const fs::path first_epoch = checkpoint_path(dir / "a" / "out", kRows / kBatch);
  EXPECT_EQ(trainer_state_load((first_epoch / kTrainerStateName).string()).num_input_tokens_seen,
            per_epoch);
  testing::TinyRun resumed(dir / "b", token_args(dir / "b" / "out", "non_padding"));
  resumed.trainer->train(data, nullptr, first_epoch);
  EXPECT_EQ(resumed.trainer->state().num_input_tokens_seen, 2 * per_epoch);

  // "all" (true, as 4.x's bool) counts the padding too: every row is max_seq_length long.
  testing::TinyRun padded(dir / "c", token_args(dir / "c" / "out", "true"));
  padded.trainer->train(data, nullptr);
  EXPECT_EQ(padded.trainer->state().num_input_tokens_seen, 2 * kRows * kMaxSeqLength);

  // Off (the default): 0, and not logged.
  testing::TinyRun off(dir / "d", token_args(dir / "d" / "out", "no"));
  off.trainer->train(data, nullptr);
  EXPECT_EQ(off.trainer->state().num_input_tokens_seen, 0);
  EXPECT_FALSE(off.trainer->state().log_history.back().contains("num_input_tokens_seen"));
}

// Two replicas (the XLA CPU plugin's devices) with half the batch each see the same tokens
// between them as one device with the whole batch.
TEST(TrainerTokens, SumsOverReplicas) {
  const std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  std::unique_ptr<Backend> backend =
      make_pjrt_backend_for(pjrt::PluginKind::cpu, pjrt::discovery_sources(plugin), 2);
  fs::path dir = testing::scratch_folder();
  const fs::path tsv = testing::write_sentiment_tsv(dir / "train.tsv", kRows, 5);
  ClassificationDataset data = testing::load_sentiment(tsv);
  const fs::path vocab = testing::write_vocab(dir);
  Tokenizer tokenizer = tokenizer_load_vocab(vocab.string());
  BertConfig config = testing::tiny_config(tokenizer.vocab_size(), 0.0);
  TrainingArguments args = token_args(dir / "out", "non_padding");
  args.num_devices = 2;
  args.per_device_train_batch_size = kBatch / 2;
  args.save_strategy = SaveStrategy::no;
  args.compile_cache_dir = "none";
  training_arguments_post_init(args);
  std::ostringstream log;
  Trainer trainer(args, config, testing::initial_weights(config, 7), tokenizer, *backend, log);
  trainer.train(data, nullptr);
  EXPECT_EQ(trainer.state().num_input_tokens_seen, 2 * non_padding_tokens(tsv));
}

}  // namespace
}  // namespace kiln
