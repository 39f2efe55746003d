// The command line's bad inputs: each ends with exit code 1 and a message that names the
// file and line, the label, the tensor or the flag at fault.
#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "kiln/models/bert_pretrained.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::run_kiln;

// Runs `kiln train` with the tiny model and `extra` flags; expects failure naming `needles`.
void expect_train_error(const fs::path& dir, const std::string& extra,
                        const std::vector<std::string>& needles) {
  std::string model = testing::write_tiny_model_files(dir / "model");
  testing::CommandResult result =
      run_kiln("train " + model + " --output_dir " + (dir / "out").string() +
               " --max_steps 1 --disable_tqdm " + extra);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("kiln: error: "), std::string::npos) << result.output;
  for (const std::string& needle : needles) {
    EXPECT_NE(result.output.find(needle), std::string::npos)
        << "'" << needle << "' not in: " << result.output;
  }
}

TEST(CliErrors, MissingTrainFile) {
  fs::path dir = testing::scratch_folder();
  std::string missing = (dir / "nowhere.tsv").string();
  expect_train_error(dir, "--train_file " + missing, {missing});
}

TEST(CliErrors, MalformedCsvRowNamesFileAndLine) {
  fs::path dir = testing::scratch_folder();
  testing::write_text(dir / "train.csv", "text,label\ngood movie,1\nbad food\nfine,0\n");
  expect_train_error(dir, "--train_file " + (dir / "train.csv").string(),
                     {(dir / "train.csv").string() + ":3"});
}

TEST(CliErrors, UnknownValidationLabelNamesFileLineAndLabel) {
  fs::path dir = testing::scratch_folder();
  testing::write_text(dir / "train.csv", "text,label\ngood movie,pos\nbad food,neg\n");
  testing::write_text(dir / "valid.csv", "text,label\ngreat plot,pos\nthe movie,neutral\n");
  expect_train_error(dir,
                     "--train_file " + (dir / "train.csv").string() + " --validation_file " +
                         (dir / "valid.csv").string() + " --do_eval",
                     {(dir / "valid.csv").string() + ":3", "neutral"});
}

TEST(CliErrors, NonFiniteLossNamesTheStepAndTensor) {
  fs::path dir = testing::scratch_folder();
  testing::write_text(dir / "train.csv", "text,label\ngood movie,1\nbad food,0\n");
  // Step 1 moves the weights to about 1e30; step 2 overflows.
  expect_train_error(dir,
                     "--train_file " + (dir / "train.csv").string() +
                         " --max_seq_length 16 --learning_rate 1e30 --max_steps 3 "
                         "--per_device_train_batch_size 1 --validation_split_percentage 0",
                     {"[step 2]", "the first non-finite value is in tensor %",
                      "--nan_inf_strategy skip"});
}

TEST(CliErrors, VocabularyWithoutUnknownToken) {
  fs::path dir = testing::scratch_folder();
  fs::create_directories(dir / "bad");
  fs::path vocab = testing::write_vocab(dir / "bad", /*with_unk=*/false);
  testing::write_text(dir / "train.csv", "text,label\ngood movie,1\nbad food,0\n");
  expect_train_error(
      dir, "--train_file " + (dir / "train.csv").string() + " --tokenizer_name " + vocab.string(),
      {vocab.string(), "[UNK]"});
}

TEST(CliErrors, WeightsThatDoNotMatchTheConfigNameTheTensor) {
  fs::path dir = testing::scratch_folder();
  testing::write_tiny_model_files(dir / "model");
  // config.json says hidden 8; the weights are those of a hidden-16 model.
  BertConfig config = bert_config_read((dir / "model" / "config.json").string());
  BertConfig wider = config;
  wider.hidden_size = 16;
  safetensors_write((dir / "model" / "model.safetensors").string(),
                    testing::initial_weights(wider, 1));
  testing::write_text(dir / "train.csv", "text,label\ngood movie,1\nbad food,0\n");
  testing::CommandResult result = run_kiln(
      "train --model_name_or_path " + (dir / "model").string() + " --train_file " +
      (dir / "train.csv").string() + " --output_dir " + (dir / "out").string() + " --max_steps 1");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("model.safetensors"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("tensor 'bert.embeddings"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("(16)"), std::string::npos) << result.output;
}

TEST(CliErrors, WeightsOfAnotherModelNameTheirTensors) {
  fs::path dir = testing::scratch_folder();
  testing::write_tiny_model_files(dir / "model");
  safetensors_write((dir / "model" / "model.safetensors").string(),
                    {{"transformer.h.0.attn.c_attn.weight", Tensor(DType::f32, {8, 24})}});
  testing::write_text(dir / "train.csv", "text,label\ngood movie,1\nbad food,0\n");
  testing::CommandResult result =
      run_kiln("train --model_name_or_path " + (dir / "model").string() + " --train_file " +
               (dir / "train.csv").string() + " --output_dir " + (dir / "out").string());
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("model.safetensors] none of its tensors is a parameter"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("transformer.h.0.attn.c_attn.weight"), std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace kiln
