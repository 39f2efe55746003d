// `kiln generate` on a tiny GPT-2 over a byte-level BPE tokenizer (tests/data/gpt2/cli, by
// make_gpt2_fixtures.py, with tests/fixtures/tokenizer_bpe/gpt2's tokenizer): greedy output is the
// text of transformers' generate(do_sample=False) continuation; sampling with a seed prints the
// same text twice; bad flags and folders are named.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// The fixture model with its tokenizer, in a scratch folder.
fs::path model_folder() {
  fs::path folder = testing::scratch_folder() / "model";
  fs::create_directories(folder);
  const fs::path data = fs::path(KILN_SOURCE_DIR) / "tests/data/gpt2/cli";
  const fs::path tokenizer = fs::path(KILN_SOURCE_DIR) / "tests/fixtures/tokenizer_bpe/gpt2";
  for (const fs::path& file : {data / "config.json", data / "model.safetensors",
                               tokenizer / "tokenizer.json", tokenizer / "tokenizer_config.json"}) {
    fs::copy_file(file, folder / file.filename());
  }
  return folder;
}

std::string generate(const fs::path& folder, const std::string& prompt,
                     const std::string& flags, int expected_exit = 0) {
  testing::CommandResult result = testing::run_kiln("generate --model_name_or_path '" +
                                                    folder.string() + "' --prompt '" + prompt +
                                                    "' " + flags + " 2>&1");
  EXPECT_EQ(result.exit_code, expected_exit) << result.output;
  return result.output;
}

TEST(CliGenerate, GreedyOutputIsTransformersGenerate) {
  const nlohmann::json expected = testing::read_json(
      fs::path(KILN_SOURCE_DIR) / "tests/data/gpt2/cli/expected.json");
  const fs::path folder = model_folder();
  const std::string max_new_tokens = std::to_string(expected.at("max_new_tokens").get<int>());
  EXPECT_EQ(generate(folder, expected.at("prompt"), "--max_new_tokens " + max_new_tokens),
            expected.at("continuation").get<std::string>() + "\n");
  EXPECT_EQ(generate(folder, expected.at("prompt"),
                     "--max_new_tokens " + max_new_tokens + " --device reference"),
            expected.at("continuation").get<std::string>() + "\n");
}

TEST(CliGenerate, SamplingWithASeedIsReproducible) {
  const fs::path folder = model_folder();
  const std::string flags = "--do_sample --seed 7 --top_k 20 --top_p 0.9 --temperature 0.8";
  const std::string first = generate(folder, "It was", flags);
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(generate(folder, "It was", flags), first);
}

TEST(CliGenerate, ErrorsNameTheFlag) {
  const fs::path folder = model_folder();
  EXPECT_NE(generate(folder, "It was", "--do_sample --top_p 1.5", 2).find("[--top_p]"),
            std::string::npos);
  EXPECT_NE(generate(folder, "It was", "--max_new_tokens -1", 2).find("[--max_new_tokens]"),
            std::string::npos);
  EXPECT_NE(generate(folder, "It was", "--max_new_tokens 100", 1).find("[--max_new_tokens]"),
            std::string::npos);
  EXPECT_NE(generate(folder / "missing", "It was", "", 1).find("[--model_name_or_path]"),
            std::string::npos);
  const fs::path empty = folder.parent_path() / "empty";
  fs::create_directories(empty);
  EXPECT_NE(generate(empty, "It was", "", 1).find("has no config.json"), std::string::npos);
}

}  // namespace
}  // namespace kiln
