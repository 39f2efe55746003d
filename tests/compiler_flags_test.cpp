// The user's compiler flags reach every program a Trainer compiles: --bf16 (HF's bf16=True:
// training and evaluation in mixed precision) and --disable_passes.
#include "compiler_test_util.h"
#include "trainer_test_util.h"

namespace kiln {
namespace {

TEST(CompilerFlags, Bf16AndDisabledPassesReachTrainingAndEvaluation) {
  std::filesystem::path dir = testing::scratch_folder();
  TrainingArguments args = testing::tiny_args(dir / "out");
  args.max_steps = 2;
  args.bf16 = true;
  args.disable_passes = "cse,fold";
  training_arguments_post_init(args);
  Tokenizer tokenizer = tokenizer_load_vocab(testing::write_vocab(dir).string());
  BertConfig config = testing::tiny_config(tokenizer.vocab_size());
  ClassificationDataset train =
      testing::load_sentiment(testing::write_sentiment_tsv(dir / "train.tsv", 8, 5));
  ClassificationDataset eval = testing::load_sentiment(
      testing::write_sentiment_tsv(dir / "eval.tsv", 4, 6), train.label_names);
  testing::RecordingBackend backend;
  std::ostringstream log;
  Trainer trainer(args, config, testing::initial_weights(config, 7), tokenizer, backend, log);
  trainer.train(train, &eval);
  trainer.evaluate(eval);
  ASSERT_GE(backend.programs().size(), 2u);  // a training step and a forward pass
  for (const auto& program : backend.programs()) {
    EXPECT_TRUE(program->spec.options.bf16);
    EXPECT_FALSE(program->spec.options.common_subexpressions);
    EXPECT_FALSE(program->spec.options.constant_folding);
    EXPECT_TRUE(program->spec.options.simplification);
  }
}

}  // namespace
}  // namespace kiln
