// The malformed-input corpus (tests/data/malformed/, made by
// tests/fixtures_gen/make_malformed_inputs.py): each file goes through the real `kiln train` as
// MANIFEST.tsv says, which must end with exit code 1 (a clean error, not a signal), print
// "kiln: error:", name the file, and give the expected message naming the line, the tensor or
// the config key at fault.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(KILN_SOURCE_DIR) / "tests" / "data" / "malformed";

struct MalformedCase {
  std::string file, kind, expected;
};

std::vector<MalformedCase> read_manifest() {
  std::vector<MalformedCase> cases;
  std::ifstream manifest(kCorpus / "MANIFEST.tsv");
  for (std::string line; std::getline(manifest, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t first = line.find('\t'), second = line.find('\t', first + 1);
    cases.push_back({line.substr(0, first), line.substr(first + 1, second - first - 1),
                     line.substr(second + 1)});
  }
  return cases;
}

std::string replaced(std::string text, const std::string& placeholder, const std::string& value) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size())) {
    text.replace(at, placeholder.size(), value);
  }
  return text;
}

class MalformedInput : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedInput, GivesACleanErrorNamingTheFile) {
  const MalformedCase& param = GetParam();
  fs::path dir = testing::scratch_folder();
  const fs::path input = kCorpus / param.file;
  // A good model: the tiny config (hidden 8, labels neg/pos) with its vocabulary and weights.
  fs::create_directories(dir / "model");
  fs::path vocab = testing::write_vocab(dir / "model");
  BertConfig config = testing::tiny_config(tokenizer_load_vocab(vocab.string()).vocab_size());
  config.id2label = {"neg", "pos"};
  bert_config_write((dir / "model" / "config.json").string(), config);
  safetensors_write((dir / "model" / "model.safetensors").string(),
                    testing::initial_weights(config, 1));
  testing::write_text(dir / "train.csv", "text,label\ngood movie,pos\nbad food,neg\n");
  const std::string good_model = "--model_name_or_path " + (dir / "model").string();
  const std::string good_train = " --train_file " + (dir / "train.csv").string();

  std::string given = input.string(), arguments;
  if (param.kind == "train") {
    arguments = good_model + " --train_file " + given;
  } else if (param.kind == "validation") {
    arguments = good_model + good_train + " --validation_file " + given + " --do_eval";
  } else if (param.kind == "config") {
    arguments = "--config_name " + given + " --tokenizer_name " + vocab.string() + good_train;
  } else if (param.kind == "vocab" || param.kind == "tokenizer") {
    arguments = "--config_name tiny --tokenizer_name " + given + good_train;
  } else if (param.kind == "weights" || param.kind == "model_config") {
    const char* name = param.kind == "weights" ? "model.safetensors" : "config.json";
    fs::copy_file(input, dir / "model" / name, fs::copy_options::overwrite_existing);
    given = (dir / "model" / name).string();
    arguments = good_model + good_train;
  } else {
    FAIL() << "unknown kind '" << param.kind << "' in MANIFEST.tsv";
  }
  testing::CommandResult result =
      testing::run_kiln("train " + arguments + " --output_dir " + (dir / "out").string() +
                        " --max_seq_length 16 --max_steps 1 --disable_tqdm --report_to none"
                        " --validation_split_percentage 0");
  EXPECT_EQ(result.exit_code, 1) << "(-1: killed by a signal) " << result.output;
  EXPECT_NE(result.output.find("kiln: error: "), std::string::npos) << result.output;
  const std::string expected =
      replaced(replaced(param.expected, "{file}", given), "{weights}",
               (dir / "model" / "model.safetensors").string());
  // Every message names the file, except the tensor-shape ones, which name the weights file
  // that does not fit the config.
  if (param.kind != "model_config") {
    EXPECT_NE(result.output.find(given), std::string::npos) << result.output;
  }
  EXPECT_NE(result.output.find(expected), std::string::npos)
      << "'" << expected << "' not in: " << result.output;
}

INSTANTIATE_TEST_SUITE_P(Corpus, MalformedInput, ::testing::ValuesIn(read_manifest()),
                         [](const ::testing::TestParamInfo<MalformedCase>& info) {
                           std::string name = info.param.file;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(MalformedInput, CorpusHasAtLeastFortyFiles) {
  EXPECT_GE(read_manifest().size(), 40u);
  for (const MalformedCase& entry : read_manifest()) {
    EXPECT_TRUE(fs::exists(kCorpus / entry.file)) << entry.file;
  }
}

}  // namespace
}  // namespace kiln
